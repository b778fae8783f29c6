
/// The state of one `await loop.sleep(for:)`: the continuation, the timer, and whether the task
/// was cancelled, guarded so that exactly one of fire, cancel or shutdown resumes the task.
final class SleepWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var timer: LoopTimer?
        var cancelled = false
    }

    private let state = NativeMutex(State())

    /// Stores the continuation and timer; returns false if the task was cancelled meanwhile.
    func arm(_ continuation: CheckedContinuation<Void, any Error>, timer: LoopTimer) -> Bool {
        state.withLock { state in
            state.continuation = continuation
            state.timer = timer
            return !state.cancelled
        }
    }

    func resume(with result: Result<Void, any Error>) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil; state.timer = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }

    /// Called from the task's cancellation handler, on any thread.
    func cancel() {
        let timer = state.withLock { state in
            state.cancelled = true
            return state.timer
        }
        if let timer, timer.cancel() { resume(with: .failure(CancellationError())) }
    }
}
