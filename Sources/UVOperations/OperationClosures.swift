/// The closures one request runs: its worker (on a pool thread), and its transform and completion
/// (on the loop's thread).
///
/// The only strong reference to them is in the request's locked state: a pool thread borrows the
/// worker from there, and the loop's thread takes them out when the request begins completing,
/// runs the transform and completion, and releases them before any waiter wakes. So what the
/// closures captured is released when the request completes, as `NSOperation` clears its
/// completion block: an object that keeps a request and is captured by its completion makes no
/// lasting cycle. (The closures are `let`s of a separate object, rather than optional `var`s of
/// the request, because the request's deinit is compiled once for every `Value`, and destroying
/// generic mutable state there looks up type metadata at run time. The request holds no
/// `unowned` reference to them either: each strong access through one costs an atomic
/// compare-and-swap on the loop's thread.)
@usableFromInline
final class OperationClosures<Value: Sendable>: Sendable {
    @usableFromInline let worker: (@Sendable () throws -> Value)?
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
