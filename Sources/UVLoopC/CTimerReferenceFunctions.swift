import CUVLoop
import UVLoop

// Timer references from C (libuv's uv_ref and uv_unref, per timer); declared and documented in
// uvloop.h.

/// The C function `uvloop_timer_set_ref`, as uvloop.h declares and documents it (its threads,
/// results and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_timer_set_ref(_ t: OpaquePointer?, _ ref: Int32) -> Int32 {
    guard let cTimer = cTimer(t) else { return UVLOOP_EINVAL }
    let timer = cTimer.timer
    let referenced = ref != 0
    guard !timer.loop.isOnLoopThread else { return timer.setReferenced(referenced) ? 1 : 0 }
    guard timer.isPending else { return 0 }
    // Through the C inbox, so that it reaches the loop in order with this thread's posts (and
    // after the timer's own start, when this thread started it).
    do {
        try cTimer.cLoop.send { timer.setReferenced(referenced) }
        return 1
    } catch {
        return 0
    }
}
