import CLibUV
import Glibc

/// A `uv_poll_t` watching a descriptor that someone else opened (a C library's socket). Loop
/// thread only, except the descriptor checks, which any thread may call.
///
/// `uv_poll_init` (libuv 1.44, Linux) refuses a descriptor that a started handle of the same loop
/// already polls (`UV_EEXIST`), then asks epoll whether the descriptor can be polled at all (an
/// `EPOLL_CTL_ADD` and `EPOLL_CTL_DEL` on the loop's epoll descriptor: `UV_EBADF` for one that is
/// not open, `UV_EPERM` for a regular file or a directory), then switches the descriptor to
/// non-blocking mode (`ioctl(FIONBIO)`), which it is left in when the handle closes. Stopping and
/// closing the handle take the descriptor out of the loop's epoll set and never close it.
struct PollHandle: NativeIOHandle {
    let handle: LibUVHandle<uv_poll_t>

    /// A handle that calls nothing until its owner sets `onEvent`.
    init(loop: NativeLoop, descriptor: Int32) throws(LoopError) {
        handle = try LibUVHandle(
            "uv_poll_init", initialize: { uv_poll_init(loop.pointer, $0, descriptor) }, fireWithEvent: { _, _ in })
    }

    /// Sets what readiness calls: `body` gets libuv's status (0, or a negative error code; libuv
    /// has then stopped the handle) and the `UV_READABLE`/`UV_WRITABLE`/`UV_DISCONNECT` bits that
    /// are ready.
    func onEvent(_ body: @escaping (Int32, Int32) -> Void) { handle.onEvent(body) }

    /// Polls for `events` (libuv's bits) from now on; zero stops polling, keeping the handle.
    /// Returns libuv's status.
    func start(_ events: Int32) -> Int32 {
        if events == 0 { return uv_poll_stop(handle.pointer) }
        return uv_poll_start(handle.pointer, events) { handle, status, events in
            LibUVHandle<uv_poll_t>.fire(handle, status, events)
        }
    }

    var isActive: Bool { handle.isActive }

    func ref() { handle.ref() }

    func unref() { handle.unref() }

    /// Stops polling and closes the handle; the descriptor stays open. Closing twice does nothing.
    func close() { handle.close() }

    static let readable = Int32(UV_READABLE.rawValue)
    static let writable = Int32(UV_WRITABLE.rawValue)
    static let disconnect = Int32(UV_DISCONNECT.rawValue)
    static let alreadyWatched = Int32(UV_EEXIST.rawValue)
    static let notOpen = Int32(UV_EBADF.rawValue)
    static let notPollable = Int32(UV_EPERM.rawValue)

    /// Whether `descriptor` is open in this process (`fcntl(F_GETFD)`). Any thread.
    static func isOpen(_ descriptor: Int32) -> Bool {
        descriptor >= 0 && fcntl(descriptor, F_GETFD) != -1
    }
}
