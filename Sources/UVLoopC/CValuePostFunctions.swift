import CLibUV
import CUVLoop
import UVLoop

// Posts that carry a 64-bit value; declared and documented in uvloop.h.

extension CLoop {
    /// Runs `callback` on the loop's thread: through the value inbox from other threads
    /// (per-thread order, no allocation, waiting while the ring is full unless `wait` is false,
    /// which returns false instead); from the loop's thread as a post.
    @inline(__always)
    func postValue(_ callback: CValueCallback, wait: Bool) throws(LoopError) -> Bool {
        if shim_thread_pointer() == loopThreadPointer {
            try loop.post { callback.run() }
            return true
        }
        guard wait else { return try valueInbox.trySend(callback) }
        try valueInbox.send(callback)
        return true
    }
}

@inline(__always)
private func postValue(
    _ l: OpaquePointer?, _ fn: uvloop_value_cb?, _ ctx: UnsafeMutableRawPointer?, _ value: UInt64, wait: Bool
) -> Int32 {
    guard let l, let fn else { return UVLOOP_EINVAL }
    return withCLoop(l, wait ? "uvloop_post_value" : "uvloop_try_post_value") { cLoop in
        do throws(LoopError) {
            let callback = CValueCallback(function: fn, context: ctx, value: value)
            return try cLoop.postValue(callback, wait: wait) ? 0 : Int32(UV_EAGAIN.rawValue)
        } catch {
            return error.cErrorCode
        }
    }
}

/// The C function `uvloop_post_value`, as uvloop.h declares and documents it (its threads,
/// results and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_post_value(
    _ l: OpaquePointer?, _ fn: uvloop_value_cb?, _ ctx: UnsafeMutableRawPointer?, _ value: UInt64
) -> Int32 {
    postValue(l, fn, ctx, value, wait: true)
}

/// The C function `uvloop_try_post_value`, as uvloop.h declares and documents it (its threads,
/// results and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_try_post_value(
    _ l: OpaquePointer?, _ fn: uvloop_value_cb?, _ ctx: UnsafeMutableRawPointer?, _ value: UInt64
) -> Int32 {
    postValue(l, fn, ctx, value, wait: false)
}
