/// The closures one request runs: its worker (on a pool thread), and its transform and completion
/// (on the loop's thread).
///
/// Kept in the request (`OperationRequest.closures`, reached only under its lock), the only
/// reference to them: a pool thread moves the worker out of there, runs it and releases it, and
/// the loop's thread moves the rest out when the request begins completing, runs the transform and
/// completion, and releases them before any waiter wakes. So what the closures captured is
/// released by the time the request completes, as `NSOperation` clears its completion block: an
/// object that keeps a request and is captured by its closures makes no lasting cycle. A struct
/// rather than an object of its own, so that a request costs no allocation for its closures.
@usableFromInline
struct OperationClosures<Value: Sendable>: Sendable {
    /// Taken by the pool thread that runs it; still here when the request was cancelled first.
    @usableFromInline var worker: (@Sendable () throws -> Value)?
    @usableFromInline let transform: (@Sendable (inout Outcome<Value>) -> Void)?
    @usableFromInline let completion: (@Sendable (Outcome<Value>) -> Void)?

    @inlinable
    init(
        worker: (@Sendable () throws -> Value)?, transform: (@Sendable (inout Outcome<Value>) -> Void)?,
        completion: (@Sendable (Outcome<Value>) -> Void)?
    ) {
        self.worker = worker
        self.transform = transform
        self.completion = completion
    }
}
