import CUVLoop

/// A C value callback, its context and its value: what `uvloop_post_value` carries through the
/// value inbox, copied into the ring (no allocation per post).
///
/// `@unchecked Sendable` is safe for the reason given on `CCallback`: UVLoop only carries the
/// triple to the loop's thread and calls it there, never reading or freeing the context.
struct CValueCallback: @unchecked Sendable {
    let function: uvloop_value_cb
    let context: UnsafeMutableRawPointer?
    let value: UInt64

    @inline(__always)
    func run() { function(context, value) }
}
