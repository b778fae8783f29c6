/// The state of one `loop.ticks(every:)` iteration, shared by the consumer and the loop's timer:
/// at most one waiting consumer and at most one tick kept for it.
final class TickWaiter: Sendable {
    private struct State {
        var waiter: CheckedContinuation<LoopInstant?, Never>?
        var pending: LoopInstant?
        var finished = false
    }

    /// The repeating timer that delivers the ticks; the timer queue reaches it through the waiter.
    let timer: LoopTimer
    private let state = NativeMutex(State())

    init(timer: LoopTimer) {
        self.timer = timer
    }

    /// The loop's thread, at each tick: hands it to the waiting consumer, or keeps it if none waits
    /// and none is kept yet (a consumer that falls behind skips ticks, it never gets a burst).
    func tick(at instant: LoopInstant) {
        let waiter = state.withLock { state -> CheckedContinuation<LoopInstant?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if state.pending == nil { state.pending = instant }
            return nil
        }
        waiter?.resume(returning: instant)
    }

    /// Ends the sequence: the waiting consumer (and every later `next()`) gets `nil`.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<LoopInstant?, Never>? in
            state.finished = true
            state.pending = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Ends the sequence and cancels its timer (task cancelled, or iterator dropped).
    func cancel() {
        timer.cancel()
        finish()
    }

    /// The next tick, or `nil` once finished. Cancelling the task finishes the sequence. Waits on
    /// the caller's actor (`isolation`), so a consumer on the loop does not hop off it.
    func next(isolation: isolated (any Actor)?) async -> LoopInstant? {
        await withTaskCancellationHandler {
            _ = isolation
            return await withCheckedContinuation { (continuation: CheckedContinuation<LoopInstant?, Never>) in
                let ready = state.withLock { state -> LoopInstant?? in
                    if state.finished { return .some(nil) }
                    if let instant = state.pending {
                        state.pending = nil
                        return .some(instant)
                    }
                    misusePrecondition(state.waiter == nil, "UVLoop: two tasks called next() on one ticks iterator at once")
                    state.waiter = continuation
                    return .none
                }
                if case .some(let value) = ready { continuation.resume(returning: value) }
            }
        } onCancel: {
            cancel()
        }
    }
}
