import CLibUV
import CUVLoop
import UVLoop

// Posting without waiting, and attaching with options; declared and documented in uvloop.h.

extension CLoop {
    /// Like `post`, but from another thread a full ring returns false instead of waiting.
    @inline(__always)
    func tryPost(_ callback: CCallback) throws(LoopError) -> Bool {
        if shim_thread_pointer() == loopThreadPointer {
            try loop.post { callback.run() }
            return true
        }
        return try inbox.trySend(callback)
    }
}

/// The C function `uvloop_try_post`, as uvloop.h declares and documents it (its threads, results
/// and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_try_post(_ l: OpaquePointer?, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let l, let fn else { return UVLOOP_EINVAL }
    return withCLoop(l) { cLoop in
        do throws(LoopError) {
            return try cLoop.tryPost(CCallback(function: fn, context: ctx)) ? 0 : Int32(UV_EAGAIN.rawValue)
        } catch {
            return error.cErrorCode
        }
    }
}

/// The ring capacity that `options` asks for, or nil when it is not valid (see uvloop.h).
func postCapacity(_ options: UnsafePointer<uvloop_options_t>?) -> Int? {
    guard let options else { return CLoop.inboxCapacity }
    // Room for later options: a field this library does not know must be left 0.
    let reservedClear = withUnsafeBytes(of: options.pointee.reserved) { $0.allSatisfy { $0 == 0 } }
    guard reservedClear else { return nil }
    let capacity = Int(options.pointee.post_capacity)
    if capacity == 0 { return CLoop.inboxCapacity }
    guard capacity >= 2, capacity <= Int(UVLOOP_POST_CAPACITY_MAX), capacity & (capacity - 1) == 0 else { return nil }
    return capacity
}

/// The C function `uvloop_attach_ex`, as uvloop.h declares and documents it (its threads, results
/// and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_attach_ex(
    _ loop: UnsafeMutablePointer<uv_loop_t>?, _ opts: UnsafePointer<uvloop_options_t>?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let loop, let out, let capacity = postCapacity(opts) else { return UVLOOP_EINVAL }
    let attached: Loop
    do {
        attached = try Loop.attach(UnsafeMutableRawPointer(loop))
    } catch {
        return error.cErrorCode
    }
    do {
        out.pointee = retainedHandle(try CLoop.of(attached, capacity: capacity))
        return 0
    } catch {
        attached.detach()
        return error.cErrorCode
    }
}
