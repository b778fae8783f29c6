import CLibUV

/// A `uv_idle_t`. While active, libuv polls for I/O with a zero timeout, so it is started only
/// while runnable work is pending and stopped the moment there is none. Loop thread only.
struct IdleHandle {
    let pointer: UnsafeMutablePointer<uv_idle_t>

    init(loop: NativeLoop, _ onIdle: @escaping () -> Void) throws(LoopError) {
        pointer = allocateHandle(uv_idle_t.self)
        let status = uv_idle_init(loop.pointer, pointer)
        guard status == 0 else {
            UnsafeMutableRawPointer(pointer).deallocate()
            throw LoopError.libuv(status, "uv_idle_init")
        }
        HandleCallback.attach(onIdle, to: pointer.asHandle)
    }

    var isActive: Bool { uv_is_active(pointer.asHandle) != 0 }

    func start() { _ = uv_idle_start(pointer) { HandleCallback.fire($0?.asHandle) } }

    func stop() { _ = uv_idle_stop(pointer) }

    func close() { closeAndFree(pointer.asHandle) }
}

/// A `uv_check_t`: runs right after the loop polled for I/O. Loop thread only.
struct CheckHandle {
    let pointer: UnsafeMutablePointer<uv_check_t>

    init(loop: NativeLoop, _ onCheck: @escaping () -> Void) throws(LoopError) {
        pointer = allocateHandle(uv_check_t.self)
        let status = uv_check_init(loop.pointer, pointer)
        guard status == 0 else {
            UnsafeMutableRawPointer(pointer).deallocate()
            throw LoopError.libuv(status, "uv_check_init")
        }
        HandleCallback.attach(onCheck, to: pointer.asHandle)
    }

    var isActive: Bool { uv_is_active(pointer.asHandle) != 0 }

    func start() { _ = uv_check_start(pointer) { HandleCallback.fire($0?.asHandle) } }

    func stop() { _ = uv_check_stop(pointer) }

    /// An unreferenced check handle does not keep the loop alive on its own.
    func unref() { uv_unref(pointer.asHandle) }

    func close() { closeAndFree(pointer.asHandle) }
}

/// A `uv_prepare_t`: runs right before the loop polls for I/O, which is the last moment to decide
/// whether that poll may block. Always active and unreferenced (it never keeps a loop alive on its
/// own). Loop thread only.
struct PrepareHandle {
    let pointer: UnsafeMutablePointer<uv_prepare_t>

    init(loop: NativeLoop, _ onPrepare: @escaping () -> Void) throws(LoopError) {
        pointer = allocateHandle(uv_prepare_t.self)
        let status = uv_prepare_init(loop.pointer, pointer)
        guard status == 0 else {
            UnsafeMutableRawPointer(pointer).deallocate()
            throw LoopError.libuv(status, "uv_prepare_init")
        }
        HandleCallback.attach(onPrepare, to: pointer.asHandle)
        _ = uv_prepare_start(pointer) { HandleCallback.fire($0?.asHandle) }
        uv_unref(pointer.asHandle)
    }

    func close() { closeAndFree(pointer.asHandle) }
}

/// The single `uv_timer_t` that wakes the loop for the earliest Swift timer. Loop thread only.
struct WakeTimer {
    let pointer: UnsafeMutablePointer<uv_timer_t>

    init(loop: NativeLoop, _ onTimer: @escaping () -> Void) throws(LoopError) {
        pointer = allocateHandle(uv_timer_t.self)
        let status = uv_timer_init(loop.pointer, pointer)
        guard status == 0 else {
            UnsafeMutableRawPointer(pointer).deallocate()
            throw LoopError.libuv(status, "uv_timer_init")
        }
        HandleCallback.attach(onTimer, to: pointer.asHandle)
    }

    /// Arms the timer `milliseconds` from libuv's cached loop time; never called with 0 from inside
    /// a timer callback (libuv 1.44 would busy-loop), which the caller guarantees by using `>= 1`.
    func start(milliseconds: UInt64) {
        _ = uv_timer_start(pointer, { HandleCallback.fire($0?.asHandle) }, milliseconds, 0)
    }

    func stop() { _ = uv_timer_stop(pointer) }

    func unref() { uv_unref(pointer.asHandle) }

    func close() { closeAndFree(pointer.asHandle) }
}
