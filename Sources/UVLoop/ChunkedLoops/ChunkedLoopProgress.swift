/// How far a chunked loop has got: what its progress callback receives.
///
/// The progress callback runs on the loop's thread: once when the chunked loop begins (with
/// `processed == 0`), then once after each chunk that ended without cancellation or error,
/// including the last one (with `processed == total`), always before the completion callback.
public struct ChunkedLoopProgress: Sendable, Hashable, CustomStringConvertible {
    /// Items whose body call has returned.
    public let processed: Int
    /// Items the chunked loop covers.
    public let total: Int

    /// Creates a progress report (the runtime makes these; public for tests of progress views).
    /// - Parameters:
    ///   - processed: items whose body call has returned.
    ///   - total: items the chunked loop covers.
    public init(processed: Int, total: Int) {
        self.processed = processed
        self.total = total
    }

    /// `processed / total`, from 0 to 1; 1 for an empty loop.
    public var fractionCompleted: Double {
        total == 0 ? 1 : Double(processed) / Double(total)
    }

    /// A readable description, for logs and test failures.
    public var description: String { "\(processed)/\(total)" }
}
