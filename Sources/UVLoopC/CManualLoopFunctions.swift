import CLibUV
import CUVLoop
import UVLoop

// A loop on a manual clock, made and driven from C (tests of C code that uses UVLoop's timers);
// declared and documented in uvloop.h.

/// The C function `uvloop_new_manual`, as uvloop.h declares and documents it (its threads,
/// results and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_new_manual(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return UVLOOP_EINVAL }
    do {
        let loop = try Loop(clock: .manual)
        do {
            out.pointee = retainedHandle(try CLoop.of(loop, ownsLoop: true))
            return 0
        } catch {
            loop.shutdown()
            return error.cErrorCode
        }
    } catch {
        return error.cErrorCode
    }
}

/// Why the calling thread cannot step `cLoop` now, as a C error code; nil when it can.
private func refusalToStep(_ cLoop: CLoop) -> Int32? {
    let loop = cLoop.loop
    if cLoop.isAttached { return UVLOOP_EINVAL }
    guard loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    if loop.isInsideRun { return Int32(UV_EBUSY.rawValue) }
    guard loop.isAcceptingWork else { return UVLOOP_ESHUTDOWN }
    return nil
}

/// The C function `uvloop_run_until_idle`, as uvloop.h declares and documents it (its threads,
/// results and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_run_until_idle(_ l: OpaquePointer?) -> Int32 {
    guard let cLoop = cLoop(l) else { return UVLOOP_EINVAL }
    if let refusal = refusalToStep(cLoop) { return refusal }
    return cResult { () throws(LoopError) in _ = try cLoop.loop.runUntilIdle() }
}

/// The C function `uvloop_advance`, as uvloop.h declares and documents it (its threads, results
/// and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_advance(_ l: OpaquePointer?, _ ns: UInt64) -> Int32 {
    guard let cLoop = cLoop(l) else { return UVLOOP_EINVAL }
    let loop = cLoop.loop
    guard loop.clockSource == .manual else { return UVLOOP_EINVAL }
    if let refusal = refusalToStep(cLoop) { return refusal }
    // As Swift's advanceTime(by:), through the same stepping: what is ready runs first; then the
    // clock stops at each due deadline in turn, so that every callback sees its own deadline as
    // now, and work it posts or schedules up to the end runs before time moves on.
    let start = loop.now.nanoseconds
    let end = LoopInstant(nanoseconds: start &+ ns < start ? .max : start &+ ns)
    return cResult { () throws(LoopError) in
        try loop.advanceManualClock(to: end) { () throws(LoopError) in try loop.runUntilIdle() }
    }
}

/// `uvloop_release`'s part for a loop made by `uvloop_new_manual`: shuts it down (closing its
/// `uv_loop_t`) unless it already is. Returns the error code that keeps the handle, or nil.
func endManualLoop(_ cLoop: CLoop) -> Int32? {
    guard cLoop.ownsLoop, cLoop.loop.isAcceptingWork else { return nil }
    guard cLoop.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    if cLoop.loop.isInsideRun { return Int32(UV_EBUSY.rawValue) }
    cLoop.loop.shutdown()
    return nil
}
