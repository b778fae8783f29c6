import CLibUV

/// One libuv handle of type `Handle` (`uv_idle_t`, `uv_timer_t`, `uv_poll_t`, ...), the way
/// libuv has one `uv_handle_t` under every kind: allocated zeroed, initialized, given the Swift
/// callback its C callback calls, closed, and freed only in its close callback, the one point at
/// which libuv allows it. Loop thread only.
///
/// The kinds UVLoop uses (`IdleHandle`, `CheckHandle`, `PrepareHandle`, `WakeTimer`,
/// `WakeHandle`) are thin wrappers that add their own verbs.
struct LibUVHandle<Handle> {
    let pointer: UnsafeMutablePointer<Handle>

    /// Allocates a handle and initializes it with `initialize` (a call such as `uv_idle_init`,
    /// named by `name` in the error it throws); the memory is freed again when that fails.
    /// - Parameters:
    ///   - fire: what the handle's C callback calls (through `LibUVHandle.fire`).
    ///   - onClose: runs in the close callback, once libuv is done with the handle: frees what the
    ///     handle used besides its memory (a wake handle's file descriptor).
    init(
        _ name: String, initialize: (UnsafeMutablePointer<Handle>) -> Int32,
        fire: @escaping () -> Void, onClose: (() -> Void)? = nil
    ) throws(LoopError) {
        try self.init(name, initialize: initialize, callback: HandleCallback(fire, onClose: onClose))
    }

    /// Allocates and initializes a handle whose C callback reports two values (a status and a
    /// set of events: `uv_poll_t`), which `fire` receives (through `LibUVHandle.fire(_:_:_:)`).
    init(
        _ name: String, initialize: (UnsafeMutablePointer<Handle>) -> Int32,
        fireWithEvent fire: @escaping (Int32, Int32) -> Void, onClose: (() -> Void)? = nil
    ) throws(LoopError) {
        try self.init(name, initialize: initialize, callback: HandleCallback(event: fire, onClose: onClose))
    }

    private init(
        _ name: String, initialize: (UnsafeMutablePointer<Handle>) -> Int32, callback: HandleCallback
    ) throws(LoopError) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<Handle>.size, alignment: MemoryLayout<Handle>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Handle>.size)
        let pointer = raw.bindMemory(to: Handle.self, capacity: 1)
        let status = initialize(pointer)
        guard status == 0 else {
            raw.deallocate()
            throw LoopError.libuv(status, name)
        }
        self.pointer = pointer
        OwnHandles.insert(raw)
        // Unmanaged: libuv carries the context as a `void *`; the matching release is in `close()`.
        base.pointee.data = Unmanaged.passRetained(callback).toOpaque()
    }

    /// The same memory seen as the `uv_handle_t` every libuv handle type begins with.
    var base: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_handle_t.self)
    }

    var isActive: Bool { uv_is_active(base) != 0 }

    /// An unreferenced handle does not keep the loop alive on its own.
    func unref() { uv_unref(base) }

    /// Undoes `unref()`: an active handle keeps the loop alive again.
    func ref() { uv_ref(base) }

    /// Closes the handle; libuv calls back in a later closing phase, which releases the Swift
    /// callback, runs `onClose` and frees the memory. Closing twice does nothing.
    func close() {
        if uv_is_closing(base) != 0 { return }
        uv_close(base) { handle in
            guard let handle else { return }
            if let data = handle.pointee.data {
                let callback = Unmanaged<HandleCallback>.fromOpaque(data)
                callback.takeUnretainedValue().onClose?()
                callback.release()
                handle.pointee.data = nil
            }
            OwnHandles.remove(handle)
            UnsafeMutableRawPointer(handle).deallocate()
        }
    }

    /// Sets what the handle's C callback calls, for a handle made before its owner existed.
    func onFire(_ fire: @escaping () -> Void) { callback.fire = fire }

    /// Sets what the C callback of a handle that reports two values calls.
    func onEvent(_ fire: @escaping (Int32, Int32) -> Void) { callback.fireWithEvent = fire }

    private var callback: HandleCallback {
        // Unmanaged: borrowed; the handle holds the owning reference until its close callback.
        Unmanaged<HandleCallback>.fromOpaque(base.pointee.data!).takeUnretainedValue()
    }

    /// Calls the Swift callback of the handle whose `uv_handle_t` is `handle`: what every C
    /// callback of these handles does.
    @inline(__always)
    static func fire(_ handle: UnsafeMutableRawPointer?) {
        guard let data = handle?.assumingMemoryBound(to: uv_handle_t.self).pointee.data else { return }
        // Unmanaged: borrowed for the duration of the call; the handle holds the owning reference.
        Unmanaged<HandleCallback>.fromOpaque(data).takeUnretainedValue().fire()
    }

    /// Calls the Swift callback of a handle made with `init(_:initialize:fireWithEvent:onClose:)`
    /// with the two values its C callback got.
    @inline(__always)
    static func fire(_ handle: UnsafeMutableRawPointer?, _ status: Int32, _ events: Int32) {
        guard let data = handle?.assumingMemoryBound(to: uv_handle_t.self).pointee.data else { return }
        // Unmanaged: borrowed for the duration of the call; the handle holds the owning reference.
        let callback = Unmanaged<HandleCallback>.fromOpaque(data).takeUnretainedValue()
        callback.fireWithEvent?(status, events)
    }
}

extension LibUVHandle where Handle == uv_poll_t {
    /// A `uv_poll_t` that watches descriptor `fd` for reading, already started: the loop's wake
    /// eventfd and wake timer. `onReadable` runs on each wake-up, after `drain` has made the
    /// descriptor unreadable again; `closeDescriptor` closes `fd` when libuv is done with the
    /// handle, or at once when the handle cannot be created.
    static func polling(
        _ fd: Int32, on loop: NativeLoop, drain: @escaping () -> Void, onReadable: @escaping () -> Void,
        closeDescriptor: @escaping () -> Void
    ) throws(LoopError) -> LibUVHandle<uv_poll_t> {
        let handle: LibUVHandle<uv_poll_t>
        do {
            handle = try LibUVHandle(
                "uv_poll_init", initialize: { uv_poll_init(loop.pointer, $0, fd) },
                fire: { drain(); onReadable() }, onClose: closeDescriptor)
        } catch {
            closeDescriptor()
            throw error
        }
        let started = uv_poll_start(handle.pointer, Int32(UV_READABLE.rawValue)) { handle, _, _ in
            LibUVHandle<uv_poll_t>.fire(handle)
        }
        guard started == 0 else {
            handle.close()
            throw LoopError.libuv(started, "uv_poll_start")
        }
        return handle
    }
}

/// The Swift side of one libuv handle, held (retained) in its `data` field from `LibUVHandle.init`
/// until its close callback.
final class HandleCallback {
    var fire: () -> Void
    /// The callback of a handle whose C callback reports a status and events (`uv_poll_t`).
    var fireWithEvent: ((Int32, Int32) -> Void)?
    let onClose: (() -> Void)?

    init(_ fire: @escaping () -> Void, onClose: (() -> Void)?) {
        self.fire = fire
        self.fireWithEvent = nil
        self.onClose = onClose
    }

    init(event fire: @escaping (Int32, Int32) -> Void, onClose: (() -> Void)?) {
        self.fire = {}
        self.fireWithEvent = fire
        self.onClose = onClose
    }
}
