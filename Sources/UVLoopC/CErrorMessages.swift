import CLibUV
import CUVLoop

// uvloop_strerror; declared and documented in uvloop.h.

/// A static C string.
@inline(__always)
private func cString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// The C function `uvloop_strerror`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_strerror(_ err: Int32) -> UnsafePointer<CChar>? {
    switch err {
    case 0: return cString("success")
    case UVLOOP_ESHUTDOWN:
        return cString("the loop has shut down and accepts no new work")
    case UVLOOP_EDETACHED:
        return cString("the loop was detached (uvloop_detach) and accepts no new work; attach the uv_loop_t again to go on")
    case UVLOOP_EINVAL:
        return cString("invalid argument: a pointer was NULL or a value out of range")
    case UVLOOP_ENOTLOOPTHREAD:
        return cString("this call must be made on the loop thread (the thread that runs uv_run); post or invoke to get there")
    case UVLOOP_EDEADLOCK:
        return cString("waiting here would wait for the calling thread itself (deadlock)")
    case UVLOOP_EALREADY:
        return cString("UVLoop is already attached to this uv_loop_t; use the uvloop_t that uvloop_attach returned")
    case UVLOOP_ENOTATTACHED:
        return cString("the loop was created in Swift, not attached from C; detach or shut it down in Swift")
    default:
        // uv_strerror allocates a message for a code libuv does not know; uv_err_name_r writes
        // into our buffer, and names unknown codes "Unknown system error N".
        let known = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { name in
            _ = uv_err_name_r(err, name.baseAddress, name.count)
            return !String(cString: name.baseAddress!).hasPrefix("Unknown")
        }
        return known ? uv_strerror(err) : cString("unknown error")
    }
}
