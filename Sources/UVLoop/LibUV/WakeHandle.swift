import CLibUV

/// A `uv_async_t`: the one handle that other threads may poke.
///
/// `@unchecked Sendable` is safe because the only call made from other threads is `uv_async_send`,
/// which libuv documents as thread-safe; `close`, `ref` and `unref` are called on the loop thread.
/// The memory stays valid until the close callback, which runs after the owner stopped sending.
@usableFromInline
struct WakeHandle: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutablePointer<uv_async_t>

    /// Must be called on the loop's thread.
    init(loop: NativeLoop, _ onWake: @escaping () -> Void) throws(LoopError) {
        pointer = allocateHandle(uv_async_t.self)
        let status = uv_async_init(loop.pointer, pointer) { HandleCallback.fire($0?.asHandle) }
        guard status == 0 else {
            UnsafeMutableRawPointer(pointer).deallocate()
            throw LoopError.libuv(status, "uv_async_init")
        }
        HandleCallback.attach(onWake, to: pointer.asHandle)
    }

    /// Thread-safe. Sends coalesce: several before the callback give one callback.
    @inlinable @inline(__always)
    func send() { _ = uv_async_send(pointer) }

    func unref() { uv_unref(pointer.asHandle) }

    func close() { closeAndFree(pointer.asHandle) }
}
