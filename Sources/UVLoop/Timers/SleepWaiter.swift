
/// The state of one `await loop.sleep(for:)`: its timer, the continuation, and whether the task
/// was cancelled, guarded so that exactly one of fire, cancel or shutdown resumes the task.
final class SleepWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        /// The continuation is stored and the timer may be scheduled: cancelling must cancel it.
        var armed = false
        var cancelled = false
    }

    /// The timer that resumes the task; the timer queue reaches it through the waiter.
    let timer: LoopTimer
    private let state = NativeMutex(State())

    init(timer: LoopTimer) {
        self.timer = timer
    }

    /// Stores the continuation; returns false if the task was cancelled meanwhile.
    func arm(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        state.withLock { state in
            state.continuation = continuation
            state.armed = true
            return !state.cancelled
        }
    }

    func resume(with result: Result<Void, any Error>) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil; state.armed = false }
            return state.continuation
        }
        continuation?.resume(with: result)
    }

    /// Called from the task's cancellation handler, on any thread.
    func cancel() {
        let armed = state.withLock { state in
            state.cancelled = true
            return state.armed
        }
        if armed, timer.cancel() { resume(with: .failure(CancellationError())) }
    }
}
