import CLibUV
import CUVLoop
import UVLoop

// The loop's life from C: attach, detach, release, keep-alive, and the thread and clock queries.
// Each function is declared and documented in uvloop.h; the compiler checks that each signature
// here matches its declaration there (`@c @implementation`).

/// Runs `body` with the `CLoop` behind a `uvloop_t *`, borrowed without a retain, after the fork
/// check (`CLoop.stopIfForkedChild`; `call`, the C function's name, goes in its message): how
/// every C entry point that takes a `uvloop_t *` reaches its `CLoop`, except `uvloop_after_fork`.
/// Borrowing keeps the threads that post off the `CLoop`'s reference count, which they would
/// otherwise all write on every call.
@inline(__always)
func withCLoop<Result>(_ handle: OpaquePointer, _ call: StaticString = #function, _ body: (CLoop) -> Result) -> Result {
    // Unmanaged: C holds the retained reference until uvloop_release; the call borrows it.
    Unmanaged<CLoop>.fromOpaque(UnsafeRawPointer(handle))._withUnsafeGuaranteedRef { cLoop in
        cLoop.stopIfForkedChild(call)
        return body(cLoop)
    }
}

/// The `CLoop` behind a `uvloop_t *`, after the fork check (see `withCLoop`); nil for NULL.
@inline(__always)
func cLoop(_ handle: OpaquePointer?, _ call: StaticString = #function) -> CLoop? {
    guard let handle else { return nil }
    return withCLoop(handle, call) { $0 }
}

/// A retained `uvloop_t *` for `cLoop`, released by `uvloop_release`.
func retainedHandle(_ cLoop: CLoop) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(cLoop).toOpaque())
}

/// The C function `uvloop_attach`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_attach(_ loop: UnsafeMutablePointer<uv_loop_t>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let loop, let out else { return UVLOOP_EINVAL }
    let attached: Loop
    do {
        attached = try Loop.attach(UnsafeMutableRawPointer(loop))
    } catch {
        return error.cErrorCode
    }
    do {
        out.pointee = retainedHandle(try CLoop.of(attached))
        return 0
    } catch {
        attached.detach()
        return error.cErrorCode
    }
}

/// The C function `uvloop_detach`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_detach(_ l: OpaquePointer?) -> Int32 {
    guard let cLoop = cLoop(l) else { return UVLOOP_EINVAL }
    return detach(cLoop)
}

private func detach(_ cLoop: CLoop) -> Int32 {
    guard cLoop.isAttached else { return UVLOOP_ENOTATTACHED }
    // C gets error codes where Swift's detach() stops the program (libuv's convention).
    guard cLoop.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    return cLoop.loop.detach() ? 0 : UVLOOP_EDETACHED
}

/// The C function `uvloop_release`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_release(_ l: OpaquePointer?) -> Int32 {
    guard let l, let cLoop = cLoop(l) else { return UVLOOP_EINVAL }
    if let refusal = endManualLoop(cLoop) { return refusal }
    if cLoop.isAttached, cLoop.loop.isAcceptingWork {
        guard cLoop.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
        _ = detach(cLoop)
    }
    // Unmanaged: the reference uvloop_attach or makeCHandle() retained for C.
    Unmanaged<CLoop>.fromOpaque(UnsafeRawPointer(l)).release()
    return 0
}

/// The C function `uvloop_keep_alive`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_keep_alive(_ l: OpaquePointer?, _ on: Int32) -> Int32 {
    guard let cLoop = cLoop(l) else { return UVLOOP_EINVAL }
    guard cLoop.isAttached else { return UVLOOP_ENOTATTACHED }
    guard cLoop.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    return cResult { () throws(LoopError) in try cLoop.loop.setKeepsOwnerLoopAlive(on != 0) }
}

/// The C function `uvloop_is_loop_thread`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_is_loop_thread(_ l: OpaquePointer?) -> Int32 {
    guard let cLoop = cLoop(l) else { return 0 }
    return cLoop.loop.isOnLoopThread ? 1 : 0
}

/// The C function `uvloop_now`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_now(_ l: OpaquePointer?) -> UInt64 {
    guard let cLoop = cLoop(l) else { return 0 }
    return cLoop.loop.now.nanoseconds
}

/// The C function `uvloop_owns_handle`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_owns_handle(_ handle: UnsafePointer<uv_handle_t>?) -> Int32 {
    guard let handle else { return 0 }
    return Loop.ownsHandle(UnsafeRawPointer(handle)) ? 1 : 0
}
