import CUVLoop
import UVLoop

// Timers from C; declared and documented in uvloop.h.

/// The object behind a `uvloop_timer_t *`: the timer's handle. C holds one retained reference
/// (`Unmanaged`) from `uvloop_timer_start` until `uvloop_timer_release`.
final class CTimer: Sendable {
    let timer: LoopTimer
    /// Where calls from other threads travel, in order with their posts.
    let cLoop: CLoop

    init(_ timer: LoopTimer, cLoop: CLoop) {
        self.timer = timer
        self.cLoop = cLoop
    }
}

/// The object behind a `uvloop_timer_t *`, borrowed for the call.
@inline(__always)
func cTimer(_ handle: OpaquePointer?, _ call: StaticString = #function) -> CTimer? {
    guard let handle else { return nil }
    // Unmanaged: C holds the retained reference until uvloop_timer_release; a call borrows it.
    let cTimer = Unmanaged<CTimer>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    cTimer.cLoop.stopIfForkedChild(call)
    return cTimer
}

/// A C delay in nanoseconds as a `Duration`; beyond `Int64.max` it is the end of time anyway.
@inline(__always)
private func duration(_ nanoseconds: UInt64) -> Duration {
    .nanoseconds(Int64(clamping: nanoseconds))
}

/// The C function `uvloop_timer_start`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_timer_start(
    _ l: OpaquePointer?, _ delay_ns: UInt64, _ repeat_ns: UInt64, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let cLoop = cLoop(l), let fn else { return UVLOOP_EINVAL }
    let callback = CCallback(function: fn, context: ctx)
    let loop = cLoop.loop
    let interval = repeat_ns == 0 ? nil : duration(repeat_ns)
    do {
        let timer: LoopTimer
        if !loop.isOnLoopThread {
            timer = try loop.scheduleFromAnotherThread(
                after: duration(delay_ns), every: interval, work: { callback.run() },
                sending: { schedule throws(LoopError) in try cLoop.send(schedule) })
        } else if let interval {
            timer = try loop.scheduleRepeating(every: interval, after: duration(delay_ns)) { callback.run() }
        } else {
            timer = try loop.schedule(after: duration(delay_ns)) { callback.run() }
        }
        if let out {
            // Unmanaged: the reference C holds until uvloop_timer_release.
            out.pointee = OpaquePointer(Unmanaged.passRetained(CTimer(timer, cLoop: cLoop)).toOpaque())
        }
        return 0
    } catch {
        return error.cErrorCode
    }
}

/// The C function `uvloop_timer_cancel`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_timer_cancel(_ t: OpaquePointer?) -> Int32 {
    guard let cTimer = cTimer(t) else { return UVLOOP_EINVAL }
    return cTimer.timer.cancel() ? 1 : 0
}

/// The C function `uvloop_timer_fire`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_timer_fire(_ t: OpaquePointer?) -> Int32 {
    guard let cTimer = cTimer(t) else { return UVLOOP_EINVAL }
    let timer = cTimer.timer
    guard !timer.loop.isOnLoopThread else { return timer.fire() ? 1 : 0 }
    guard timer.isPending else { return 0 }
    do {
        let fired = try timer.loop.invokeFromAnotherThread("uvloop_timer_fire") { deliver throws(LoopError) in
            try cTimer.cLoop.send { deliver(timer.fire()) }
        }
        return fired ? 1 : 0
    } catch {
        return error.cErrorCode
    }
}

/// The C function `uvloop_timer_again`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_timer_again(_ t: OpaquePointer?, _ delay_ns: UInt64) -> Int32 {
    guard let cTimer = cTimer(t) else { return UVLOOP_EINVAL }
    let timer = cTimer.timer
    let loop = timer.loop
    guard !loop.isOnLoopThread else { return timer.reschedule(after: duration(delay_ns)) ? 1 : 0 }
    guard timer.isPending else { return 0 }
    // The delay counts from this call on the system clock, as for uvloop_timer_start; a manual
    // clock (a loop made in Swift for tests) is read only on the loop's thread, on arrival.
    let move: @Sendable () -> Void
    if loop.clockSource == .system {
        let deadline = loop.now.advanced(by: duration(delay_ns))
        move = { _ = timer.reschedule(at: deadline) }
    } else {
        move = { _ = timer.reschedule(after: duration(delay_ns)) }
    }
    do {
        try cTimer.cLoop.send(move)
        return 1
    } catch {
        return 0
    }
}

/// The C function `uvloop_timer_is_pending`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_timer_is_pending(_ t: OpaquePointer?) -> Int32 {
    guard let cTimer = cTimer(t) else { return 0 }
    return cTimer.timer.isPending ? 1 : 0
}

/// The C function `uvloop_timer_release`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_timer_release(_ t: OpaquePointer?) {
    guard let t else { return }
    // Unmanaged: the reference uvloop_timer_start retained for C.
    Unmanaged<CTimer>.fromOpaque(UnsafeRawPointer(t)).release()
}
