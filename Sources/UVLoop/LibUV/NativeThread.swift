import CLibUV

/// An OS thread started through libuv, joined exactly once.
///
/// `@unchecked Sendable` is safe because `uv_thread_t` is a plain thread id and `join` is guarded by
/// the caller (`LoopThread` joins under its own lock, once).
package struct NativeThread: @unchecked Sendable {
    private let id: uv_thread_t

    /// Starts `body` on a new thread.
    package static func start(_ body: @escaping @Sendable () -> Void) throws(LoopError) -> NativeThread {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        // Unmanaged: the thread entry receives its closure as a `void *`; it takes the reference back.
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var tid = uv_thread_t()
        let status = uv_thread_create(&tid, { arg in
            Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue().body()
        }, context)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw LoopError.libuv(status, "uv_thread_create")
        }
        return NativeThread(id: tid)
    }

    package func join() {
        var tid = id
        _ = uv_thread_join(&tid)
    }
}
