import CUVLoop

/// A C callback and its context: what the C API posts, schedules and invokes.
///
/// `@unchecked Sendable` is safe because UVLoop only carries the pair to the loop's thread and
/// calls it there; it never reads or frees the context. What the context points to is the C
/// caller's to share safely (the C API's rule: a callback runs on the loop thread).
struct CCallback: @unchecked Sendable {
    let function: uvloop_cb
    let context: UnsafeMutableRawPointer?

    @inline(__always)
    func run() { function(context) }
}
