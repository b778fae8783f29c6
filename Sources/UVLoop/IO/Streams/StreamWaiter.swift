import Synchronization

/// One suspended call of a stream's async face (a read, a write, an accept, a connect): whether
/// its task was cancelled. The cancellation handler sets it on any thread, then asks the loop's
/// thread to resume the call; the loop's thread checks it before suspending the call, so a
/// cancel that arrives first is never missed.
final class StreamWaiter: Sendable {
    private let cancelled = Atomic<Bool>(false)

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func markCancelled() { cancelled.store(true, ordering: .releasing) }
}

extension Loop {
    /// Runs `work` on the loop's thread: at once when called there, otherwise posted (in order
    /// with the calling thread's posts). Returns the loop's refusal instead when it no longer
    /// accepts work (`work` does not run).
    func onLoopThread(_ work: @escaping @Sendable () -> Void) -> LoopError? {
        if isOnLoopThread {
            guard !confined.value.handlesClosed else { return queue.refusal }
            work()
            return nil
        }
        do {
            try post(work)
            return nil
        } catch {
            return error
        }
    }

    /// Suspends the calling task until the loop's thread resumes it: `start` runs there with the
    /// continuation, and `cancel` runs there after the task is cancelled (it must resume the
    /// continuation unless `start` or an event has already). A loop that refuses the work makes
    /// the call throw its refusal.
    func suspendOnLoopThread<Value: Sendable>(
        _ start: @escaping @Sendable (StreamWaiter, LoopContinuation<Value>) -> Void,
        cancel: @escaping @Sendable (StreamWaiter) -> Void
    ) async throws -> Value {
        let waiter = StreamWaiter()
        defer { LoopContinuation<Value>.acquire(waiter) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { checked in
                let continuation = LoopContinuation(continuation: checked, waiter: waiter)
                if let refusal = onLoopThread({ start(waiter, continuation) }) {
                    continuation.resume(throwing: refusal)
                }
            }
        } onCancel: {
            waiter.markCancelled()
            _ = onLoopThread { cancel(waiter) }
        }
    }
}
