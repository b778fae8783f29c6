import CLibUV

/// A `uv_idle_t`. While active, libuv polls for I/O with a zero timeout, so it is started only
/// while runnable work is pending and stopped the moment there is none. Loop thread only.
struct IdleHandle {
    let handle: LibUVHandle<uv_idle_t>

    init(loop: NativeLoop, _ onIdle: @escaping () -> Void) throws(LoopError) {
        handle = try LibUVHandle("uv_idle_init", initialize: { uv_idle_init(loop.pointer, $0) }, fire: onIdle)
    }

    var isActive: Bool { handle.isActive }

    func start() { _ = uv_idle_start(handle.pointer) { LibUVHandle<uv_idle_t>.fire($0) } }

    func stop() { _ = uv_idle_stop(handle.pointer) }

    /// Whether the active handle keeps the loop alive: not while its only work is timers that
    /// are due and unreferenced (`LoopTimer.setReferenced(false)`), as libuv's own loop would not
    /// stay alive for such a timer. `uv_ref` and `uv_unref` are idempotent.
    func keepsLoopAlive(_ keeps: Bool) { keeps ? handle.ref() : handle.unref() }

    func close() { handle.close() }
}

/// A `uv_check_t`: runs right after the loop polled for I/O. Loop thread only.
struct CheckHandle {
    let handle: LibUVHandle<uv_check_t>

    init(loop: NativeLoop, _ onCheck: @escaping () -> Void) throws(LoopError) {
        handle = try LibUVHandle("uv_check_init", initialize: { uv_check_init(loop.pointer, $0) }, fire: onCheck)
    }

    var isActive: Bool { handle.isActive }

    func start() { _ = uv_check_start(handle.pointer) { LibUVHandle<uv_check_t>.fire($0) } }

    func stop() { _ = uv_check_stop(handle.pointer) }

    func close() { handle.close() }
}

/// A `uv_prepare_t`: runs right before the loop polls for I/O, which is the last moment to decide
/// whether that poll may block. Always active and unreferenced (it never keeps a loop alive on its
/// own). Loop thread only.
struct PrepareHandle {
    let handle: LibUVHandle<uv_prepare_t>

    init(loop: NativeLoop, _ onPrepare: @escaping () -> Void) throws(LoopError) {
        handle = try LibUVHandle("uv_prepare_init", initialize: { uv_prepare_init(loop.pointer, $0) }, fire: onPrepare)
        _ = uv_prepare_start(handle.pointer) { LibUVHandle<uv_prepare_t>.fire($0) }
        handle.unref()
    }

    func close() { handle.close() }
}
