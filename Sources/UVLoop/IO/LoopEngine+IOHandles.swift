/// The loop's record of its open I/O handles, so that shutdown and detach close every one of them:
/// an owned loop then closes with nothing left on it, and an adopted loop leaves its owner's
/// `uv_loop_t` as it found it (`uv_loop_close` returns 0 after one more turn).
///
/// Each I/O type registers when it opens its libuv handle and unregisters when it closes it. The
/// closure registered closes the handle the way the user's `close()` would (ending reads, failing
/// pending writes and waiting tasks with ``LoopError/shutDown`` or ``LoopError/detached``); it
/// must unregister itself, and must not call user code synchronously (it may post).
/// Loop thread only.
extension LoopEngine {
    /// Records `key`'s handle as open; `close` runs at shutdown or detach unless `key` has been
    /// unregistered before.
    func registerIOHandle(_ key: ObjectIdentifier, close: @escaping () -> Void) {
        ioHandles[key] = close
    }

    /// Forgets `key`'s handle: it was closed by its user.
    func unregisterIOHandle(_ key: ObjectIdentifier) {
        ioHandles[key] = nil
    }

    /// Closes every registered handle, in no particular order. Closing one may register or
    /// close others (a listener's pending connections): repeat until none is left.
    func closeIOHandles() {
        while let (key, close) = ioHandles.first {
            ioHandles[key] = nil
            close()
        }
    }
}
