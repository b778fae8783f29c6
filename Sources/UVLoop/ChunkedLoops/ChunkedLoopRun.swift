/// One chunked loop's state on the loop's thread: its closures, how far it has got, and the
/// stride between two clock reads. Owned by the `ChunkScheduler`; never leaves the loop's thread.
///
/// Items are offsets `0..<total`; the body receives `lowerBound + offset`. The inner loop keeps
/// its position in a local, calls the body through a local copy of the closure (no retain per
/// call), checks the cancel flag (one relaxed load) and reads no clock, so it adds little to the
/// body's own cost.
final class ChunkedLoopRun {
    /// What ended a chunk.
    enum ChunkEnd {
        case budgetUsed
        case finished
        case cancelled
        case failed(any Error)
    }

    let handle: ChunkedLoop
    let lowerBound: Int
    let total: Int
    let limit: ChunkLimit
    private(set) var processed = 0
    private var body: (@Sendable (Int) throws -> Void)?
    private var progress: (@Sendable (ChunkedLoopProgress) -> Void)?
    private var completion: (@Sendable (ChunkedLoopCompletion) -> Void)?

    /// Items between two clock reads under a time budget; adapts to the body's cost.
    private var stride = 1
    /// The work a stride should take, in loop-clock nanoseconds: a sixteenth of the budget, at
    /// most 50 µs, so a chunk overruns its budget (or a timer's deadline) by about that much at
    /// most, while clock reads stay rare next to the work.
    private let checkInterval: UInt64
    private static let maxStride = 1 << 24

    init(
        handle: ChunkedLoop, lowerBound: Int, total: Int, limit: ChunkLimit,
        body: @escaping @Sendable (Int) throws -> Void,
        progress: @escaping @Sendable (ChunkedLoopProgress) -> Void,
        completion: @escaping @Sendable (ChunkedLoopCompletion) -> Void
    ) {
        self.handle = handle
        self.lowerBound = lowerBound
        self.total = total
        self.limit = limit
        self.body = body
        self.progress = progress
        self.completion = completion
        if case .nanoseconds(let budget) = limit {
            checkInterval = min(max(budget / 16, 1), 50_000)
        } else {
            checkInterval = 0
        }
    }

    var hasEnded: Bool { body == nil }
    private var hasBegun = false

    /// Reports the initial state; ends at once when there is nothing to do or it was cancelled
    /// before it began. Returns whether it still has chunks to run.
    func begin() -> Bool {
        guard !hasEnded, !hasBegun else { return !hasEnded }
        hasBegun = true
        progress?(ChunkedLoopProgress(processed: 0, total: total))
        if handle.isCancelRequested {
            end(.cancelled)
        } else if total == 0 {
            end(.finished)
        }
        return !hasEnded
    }

    /// Runs one chunk, then reports progress (or the end). Returns whether chunks remain.
    func step(_ engine: LoopEngine) -> Bool {
        guard !hasEnded else { return false }
        if handle.isCancelRequested {
            end(.cancelled)
            return false
        }
        switch runChunk(engine) {
        case .budgetUsed:
            progress?(ChunkedLoopProgress(processed: processed, total: total))
        case .finished:
            // Every item has run, so nothing is left to cancel: marked ended before the last
            // progress report, a cancel from that callback returns false. A cancel that came
            // first (from another thread, during the last item) is what the completion reports.
            let cancelledFirst = !handle.markEnded()
            progress?(ChunkedLoopProgress(processed: processed, total: total))
            end(cancelledFirst ? .cancelled : .finished, alreadyMarked: true)
        case .cancelled:
            end(.cancelled)
        case .failed(let error):
            end(.failed(error))
        }
        return !hasEnded
    }

    /// Ends the chunked loop because the loop is shutting down; a run that has not begun reports
    /// its initial progress first, so progress always precedes completion.
    func stopForShutdown() {
        guard !hasEnded else { return }
        if !hasBegun {
            hasBegun = true
            progress?(ChunkedLoopProgress(processed: 0, total: total))
        }
        end(.loopShutDown)
    }

    /// Delivers the completion once and releases the closures, here on the loop's thread.
    /// `alreadyMarked`: the caller has marked the handle ended and settled the reason.
    private func end(_ reason: ChunkedLoopCompletion.Reason, alreadyMarked: Bool = false) {
        guard let completion else { return }
        var reason = reason
        let wasRunning = alreadyMarked || handle.markEnded()
        switch reason {
        case .finished, .loopShutDown:
            // A cancel that returned true is what the completion reports.
            if !wasRunning { reason = .cancelled }
        case .cancelled, .failed:
            break
        }
        body = nil
        progress = nil
        self.completion = nil
        let report = ChunkedLoopCompletion(reason: reason, processed: processed, total: total, lowerBound: lowerBound)
        completion(report)
        handle.deliver(report)
    }

    private func runChunk(_ engine: LoopEngine) -> ChunkEnd {
        guard let body else { return .finished }
        let cancel = handle
        let base = lowerBound
        let end = total
        var offset = processed
        defer { processed = offset }
        switch limit {
        case .items(let count):
            let chunkEnd = end - offset <= count ? end : offset + count
            while offset < chunkEnd {
                if cancel.isCancelRequested { return .cancelled }
                do { try body(base &+ offset) } catch { return .failed(error) }
                offset += 1
            }
        case .nanoseconds(let budget):
            var lastCheck = engine.now
            let deadline = lastCheck.addingClamped(budget)
            while offset < end {
                let strideEnd = end - offset <= stride ? end : offset + stride
                while offset < strideEnd {
                    if cancel.isCancelRequested { return .cancelled }
                    do { try body(base &+ offset) } catch { return .failed(error) }
                    offset += 1
                }
                let now = engine.now
                adaptStride(elapsed: now >= lastCheck ? now - lastCheck : 0)
                lastCheck = now
                if now >= deadline { break }
                // A timer came due: end the chunk so that it fires now rather than after the budget.
                if engine.hasDueTimers(at: now) { break }
            }
        }
        return offset == end ? .finished : .budgetUsed
    }

    /// Doubles the stride while a stride takes under half the check interval; scales it down in
    /// proportion when one takes over twice as long, so one slow stretch is corrected at once.
    @inline(__always)
    private func adaptStride(elapsed: UInt64) {
        if elapsed < checkInterval / 2 {
            if stride < Self.maxStride { stride &<<= 1 }
        } else if elapsed > checkInterval * 2 {
            stride = max(1, Int(UInt64(stride) * checkInterval / elapsed))
        }
    }
}
