import CLibUV

/// The one handle that other threads may poke: an eventfd that the loop polls (`uv_poll_t`).
///
/// Not a `uv_async_t`: in libuv 1.44 `uv_async_send` marks the handle busy, writes to the loop's
/// eventfd, then marks it done, and the woken loop spins (997 `pause`s, then `sched_yield`) while
/// it finds the handle busy. A loop thread that wakes before its waker has returned from the
/// write (always, when the kernel runs the woken thread at once on the waker's CPU) spins there,
/// burning the CPU the waker needs to finish. Posting already sends at most one wake-up
/// per sleep (`PostQueue.wakePending`, `InboxRing`), so the handle needs no coalescing of its own:
/// a send is one `write`, a wake-up one `read`.
///
/// `@unchecked Sendable` is safe because the only call made from other threads is `send()`, a
/// `write` to the eventfd; `close`, `ref` and `unref` are called on the loop thread. The fd is
/// closed, and the memory freed, in the close callback. Every sender has returned before `close()`
/// (`PostQueue.waitForWakers`, `InboxRing`'s sender count), so no write can reach a closed fd, or
/// one already reused by the process for something else.
@usableFromInline
struct WakeHandle: @unchecked Sendable {
    let handle: LibUVHandle<uv_poll_t>
    @usableFromInline let fd: Int32

    /// Must be called on the loop's thread.
    init(loop: NativeLoop, _ onWake: @escaping () -> Void) throws(LoopError) {
        let fd = shim_eventfd_open()
        guard fd >= 0 else { throw LoopError.libuv(fd, "eventfd") }
        handle = try .polling(
            fd, on: loop, drain: { shim_eventfd_drain(fd) }, onReadable: onWake,
            closeDescriptor: { shim_close_fd(fd) })
        self.fd = fd
    }

    /// Thread-safe. Sends coalesce: several before the callback give one callback.
    @inlinable @inline(__always)
    func send() { shim_eventfd_signal(fd) }

    func unref() { handle.unref() }

    func ref() { handle.ref() }

    func close() { handle.close() }
}
