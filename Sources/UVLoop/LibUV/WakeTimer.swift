import CLibUV

/// What wakes the loop for its earliest timer: a timerfd armed for that deadline on the monotonic
/// clock, to the nanosecond, and polled by the loop (`uv_poll_t`) like the wake eventfd. Loop
/// thread only.
///
/// Not a `uv_timer_t`: libuv's timers count whole milliseconds of its cached loop time, so a timer
/// rounded up to the next millisecond fired up to a millisecond late.
///
/// The descriptor is polled from creation to close, and the handle is referenced only while the
/// timer is armed: armed, it keeps the loop alive, as a libuv timer would; stopped, or once it has
/// fired, it does not. Referencing and unreferencing are counters in libuv, so arming and stopping
/// cost no `epoll_ctl`. A deadline left behind by `stop()` may still wake the loop once, which only
/// makes it look for due timers.
struct WakeTimer {
    let handle: LibUVHandle<uv_poll_t>
    let fd: Int32

    init(loop: NativeLoop, _ onTimer: @escaping () -> Void) throws(LoopError) {
        let fd = shim_timerfd_open()
        guard fd >= 0 else { throw LoopError.libuv(fd, "timerfd_create") }
        handle = try .polling(
            fd, on: loop, drain: { shim_timerfd_drain(fd) }, onReadable: onTimer,
            closeDescriptor: { shim_close_fd(fd) })
        handle.unref()
        self.fd = fd
    }

    /// Arms the timer for `deadline` (monotonic nanoseconds; at once if it has passed), replacing
    /// the deadline it had; while armed it keeps the loop alive.
    func start(deadline: UInt64) {
        let status = shim_timerfd_arm(fd, deadline)
        misusePrecondition(status == 0, "UVLoop: timerfd_settime failed: \(LoopError.libuv(status, "timerfd_settime"))")
        handle.ref()
    }

    /// Lets the loop end without this timer: after it fired, or when no timer is left.
    func stop() { handle.unref() }

    /// Whether the armed timer keeps the loop alive: not while every timer it waits for is
    /// unreferenced (`LoopTimer.setReferenced(false)`). `uv_ref` and `uv_unref` are idempotent.
    func keepsLoopAlive(_ keeps: Bool) { keeps ? handle.ref() : handle.unref() }

    func close() { handle.close() }
}
