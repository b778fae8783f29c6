import CUVLoop
import UVLoop

// Timers from C; declared and documented in uvloop.h.

/// The object behind a `uvloop_timer_t *`: the timer's handle. C holds one retained reference
/// (`Unmanaged`) from `uvloop_timer_start` until `uvloop_timer_release`.
final class CTimer: Sendable {
    let timer: LoopTimer

    init(_ timer: LoopTimer) {
        self.timer = timer
    }
}

/// The timer behind a `uvloop_timer_t *`, borrowed for the call.
@inline(__always)
private func cTimer(_ handle: OpaquePointer?) -> LoopTimer? {
    guard let handle else { return nil }
    // Unmanaged: C holds the retained reference until uvloop_timer_release; a call borrows it.
    return Unmanaged<CTimer>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue().timer
}

/// A C delay in nanoseconds as a `Duration`; beyond `Int64.max` it is the end of time anyway.
@inline(__always)
private func duration(_ nanoseconds: UInt64) -> Duration {
    .nanoseconds(Int64(clamping: nanoseconds))
}

@c @implementation
func uvloop_timer_start(
    _ l: OpaquePointer?, _ delay_ns: UInt64, _ repeat_ns: UInt64, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let cLoop = cLoop(l), let fn else { return UVLOOP_EINVAL }
    let callback = CCallback(function: fn, context: ctx)
    do {
        let timer: LoopTimer
        if repeat_ns == 0 {
            timer = try cLoop.loop.schedule(after: duration(delay_ns)) { callback.run() }
        } else {
            timer = try cLoop.loop.scheduleRepeating(every: duration(repeat_ns), after: duration(delay_ns)) {
                callback.run()
            }
        }
        if let out {
            // Unmanaged: the reference C holds until uvloop_timer_release.
            out.pointee = OpaquePointer(Unmanaged.passRetained(CTimer(timer)).toOpaque())
        }
        return 0
    } catch {
        return error.cErrorCode
    }
}

@c @implementation
func uvloop_timer_cancel(_ t: OpaquePointer?) -> Int32 {
    guard let timer = cTimer(t) else { return UVLOOP_EINVAL }
    return timer.cancel() ? 1 : 0
}

@c @implementation
func uvloop_timer_fire(_ t: OpaquePointer?) -> Int32 {
    guard let timer = cTimer(t) else { return UVLOOP_EINVAL }
    return timer.fire() ? 1 : 0
}

@c @implementation
func uvloop_timer_again(_ t: OpaquePointer?, _ delay_ns: UInt64) -> Int32 {
    guard let timer = cTimer(t) else { return UVLOOP_EINVAL }
    return timer.reschedule(after: duration(delay_ns)) ? 1 : 0
}

@c @implementation
func uvloop_timer_is_pending(_ t: OpaquePointer?) -> Int32 {
    guard let timer = cTimer(t) else { return 0 }
    return timer.isPending ? 1 : 0
}

@c @implementation
func uvloop_timer_release(_ t: OpaquePointer?) {
    guard let t else { return }
    // Unmanaged: the reference uvloop_timer_start retained for C.
    Unmanaged<CTimer>.fromOpaque(UnsafeRawPointer(t)).release()
}
