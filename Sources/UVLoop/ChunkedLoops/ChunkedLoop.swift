import Synchronization

/// A handle to a chunked loop started with
/// ``Loop/startChunkedLoop(count:budget:body:progress:completion:)`` or one of its variants:
/// cancel it, ask whether it is still running, or await its completion. Usable from any thread.
/// Dropping the handle does not cancel the chunked loop.
///
/// The handle holds no closure of the chunked loop: the body, progress and completion closures
/// belong to the loop's thread and are released there when the chunked loop ends.
public final class ChunkedLoop: Sendable {
    static let running: UInt8 = 0
    static let cancelRequested: UInt8 = 1
    static let ended: UInt8 = 2

    /// The loop whose thread runs the chunked loop.
    public let loop: Loop
    /// Read by the chunk runner before every body call: a cancel takes effect at the next item.
    let status = Atomic<UInt8>(ChunkedLoop.running)
    private let outcome = NativeMutex(Outcome())

    private struct Outcome {
        var completion: ChunkedLoopCompletion?
        var waiters: [CheckedContinuation<ChunkedLoopCompletion, Never>] = []
    }

    init(loop: Loop) {
        self.loop = loop
    }

    /// Whether the chunked loop may still call its body: it has neither ended nor been cancelled.
    /// Callable from any thread.
    public var isRunning: Bool { status.load(ordering: .acquiring) == ChunkedLoop.running }

    /// Cancels the chunked loop. Callable from any thread; idempotent.
    ///
    /// Returns `true` when this call stopped a chunked loop that had not ended: no body call
    /// begins after the loop's thread sees the request, which it checks before every item. On the
    /// loop's thread (from the body, a progress callback or any other callback) that is exact: after
    /// `cancel()` returns, the body is not called again. From another thread, a body call already
    /// running finishes. The completion then reports
    /// ``ChunkedLoopCompletion/Reason/cancelled`` and the index where it stopped,
    /// unless the body call that was running threw: its error is reported, never dropped. The
    /// completion callback runs on the loop's thread at the end of the current chunk, or in the
    /// next loop iteration. Returns `false` when the chunked loop had already ended or been
    /// cancelled.
    /// - Returns: whether this call stopped a chunked loop that had not ended.
    @discardableResult
    public func cancel() -> Bool {
        status.compareExchange(
            expected: ChunkedLoop.running, desired: ChunkedLoop.cancelRequested, ordering: .acquiringAndReleasing
        ).exchanged
    }

    /// Whether a cancel has been requested and not yet acted upon; read by the runner per item.
    @inline(__always)
    var isCancelRequested: Bool { status.load(ordering: .relaxed) == ChunkedLoop.cancelRequested }

    /// Marks the chunked loop ended from the loop's thread; returns false when a cancel came first.
    func markEnded() -> Bool {
        let previous = status.exchange(ChunkedLoop.ended, ordering: .acquiringAndReleasing)
        return previous == ChunkedLoop.running
    }

    /// How the chunked loop ended, once it has; suspends the calling task until then.
    ///
    /// Cancelling the awaiting task cancels the chunked loop (see ``cancel()``); the completion
    /// then arrives once the loop's thread has seen it, usually with
    /// ``ChunkedLoopCompletion/Reason/cancelled``. Several tasks may
    /// await the same chunked loop; each gets the same completion. The loop must keep running for
    /// the completion to arrive.
    public var completion: ChunkedLoopCompletion {
        get async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<ChunkedLoopCompletion, Never>) in
                    let ready = outcome.withLock { outcome -> ChunkedLoopCompletion? in
                        if let completion = outcome.completion { return completion }
                        outcome.waiters.append(continuation)
                        return nil
                    }
                    if ready == nil { loop.preconditionSteppedWhileAwaiting("ChunkedLoop.completion") }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    /// Records the completion and resumes every task awaiting it (loop thread, once).
    func deliver(_ completion: ChunkedLoopCompletion) {
        let waiters = outcome.withLock { outcome in
            outcome.completion = completion
            defer { outcome.waiters = [] }
            return outcome.waiters
        }
        for waiter in waiters { waiter.resume(returning: completion) }
    }
}
