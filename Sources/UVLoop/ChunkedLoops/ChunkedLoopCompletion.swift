/// How a chunked loop ended: what its completion callback receives, and what awaiting it returns.
///
/// Every chunked loop ends exactly once, with one of these, on the loop's thread. It always says
/// how many items were processed, so no work is lost without its caller knowing.
public struct ChunkedLoopCompletion: Sendable, CustomStringConvertible {
    /// Why the chunked loop ended.
    public enum Reason: Sendable, CustomStringConvertible {
        /// Every item was processed.
        case finished
        /// ``ChunkedLoop/cancel()`` was called (directly, or by cancelling a task awaiting it).
        case cancelled
        /// The body threw this error; the item it threw for is not counted as processed.
        case failed(any Error)
        /// The loop shut down (or was detached) before the chunked loop finished.
        case loopShutDown

        /// A readable description, for logs and test failures.
        public var description: String {
            switch self {
            case .finished: return "finished"
            case .cancelled: return "cancelled"
            case .failed(let error): return "failed(\(error))"
            case .loopShutDown: return "loopShutDown"
            }
        }
    }

    /// Why it ended.
    public let reason: Reason
    /// Items whose body call returned normally: the first `processed` items, in order.
    public let processed: Int
    /// Items the chunked loop covered.
    public let total: Int
    /// The index at which it stopped, `nil` when it finished: the first index whose body call did
    /// not return normally (the one that threw, or the next one that would have run). For a count
    /// or a range this is the index passed to the body; for a collection it is the offset from
    /// the collection's start. Always the start index plus `processed`.
    public let stoppedAt: Int?

    init(reason: Reason, processed: Int, total: Int, lowerBound: Int) {
        self.reason = reason
        self.processed = processed
        self.total = total
        if case .finished = reason {
            stoppedAt = nil
        } else {
            stoppedAt = lowerBound &+ processed
        }
    }

    /// Whether every item was processed.
    public var isFinished: Bool {
        if case .finished = reason { return true }
        return false
    }

    /// The number of items processed when the chunked loop finished; otherwise throws what stopped
    /// it. Lets `try await loop.startChunkedLoop(…).completion.get()` read like a throwing call.
    /// - Returns: ``processed``, which then equals ``total``.
    /// - Throws: the body's error; `CancellationError` when cancelled; ``LoopError/shutDown`` when
    ///   the loop shut down (or was detached) first.
    public func get() throws -> Int {
        switch reason {
        case .finished: return processed
        case .cancelled: throw CancellationError()
        case .failed(let error): throw error
        case .loopShutDown: throw LoopError.shutDown
        }
    }

    /// A readable description, for logs and test failures.
    public var description: String {
        if let stoppedAt {
            return "\(reason) at \(stoppedAt) after \(processed) of \(total) items"
        }
        return "\(reason): \(processed) of \(total) items"
    }
}
