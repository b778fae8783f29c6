import CLibUV

/// What wakes the loop for its earliest timer: a timerfd armed for that deadline on the monotonic
/// clock, to the nanosecond, and polled by the loop (`uv_poll_t`) like the wake eventfd. Loop
/// thread only.
///
/// Not a `uv_timer_t`: libuv's timers count whole milliseconds of its cached loop time, so a timer
/// rounded up to the next millisecond fired up to a millisecond late. While armed, the timer keeps
/// the loop alive, as a libuv timer would; stopped, it does not.
struct WakeTimer {
    let handle: LibUVHandle<uv_poll_t>
    let fd: Int32

    init(loop: NativeLoop, _ onTimer: @escaping () -> Void) throws(LoopError) {
        let fd = uvloop_timerfd_open()
        guard fd >= 0 else { throw LoopError.libuv(fd, "timerfd_create") }
        do {
            handle = try LibUVHandle(
                "uv_poll_init", initialize: { uv_poll_init(loop.pointer, $0, fd) },
                fire: { uvloop_timerfd_drain(fd); onTimer() }, onClose: { uvloop_eventfd_close(fd) })
        } catch {
            uvloop_eventfd_close(fd)
            throw error
        }
        self.fd = fd
    }

    /// Arms the timer for `deadline` (monotonic nanoseconds; at once if it has passed), replacing
    /// the deadline it had, and polls it.
    func start(deadline: UInt64) {
        let status = uvloop_timerfd_arm(fd, deadline)
        misusePrecondition(status == 0, "UVLoop: timerfd_settime failed: \(LoopError.libuv(status, "timerfd_settime"))")
        if !handle.isActive {
            _ = uv_poll_start(handle.pointer, Int32(UV_READABLE.rawValue)) { handle, _, _ in
                LibUVHandle<uv_poll_t>.fire(handle)
            }
        }
    }

    /// Stops polling the timer, so that it no longer keeps the loop alive. A deadline that passes
    /// meanwhile is forgotten: `start` sets a new one and clears expirations not yet read.
    func stop() { _ = uv_poll_stop(handle.pointer) }

    func close() { handle.close() }
}
