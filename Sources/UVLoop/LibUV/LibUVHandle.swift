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
        try self.init(name, initialize: initialize, context: HandleCallback(fire, onClose: onClose))
    }

    /// Allocates and initializes a handle whose C callback reports two values (a status and a
    /// set of events: `uv_poll_t`), which `fire` receives (through `LibUVHandle.fire(_:_:_:)`).
    init(
        _ name: String, initialize: (UnsafeMutablePointer<Handle>) -> Int32,
        fireWithEvent fire: @escaping (Int32, Int32) -> Void, onClose: (() -> Void)? = nil
    ) throws(LoopError) {
        try self.init(name, initialize: initialize, context: HandleCallback(event: fire, onClose: onClose))
    }

    /// Allocates `byteCount` zeroed bytes (the size of `Handle` unless the handle is one of
    /// several kinds seen as a common prefix, as `uv_stream_t` is), initializes them with
    /// `initialize`, and keeps `context` (retained) in the handle's `data` field until the close
    /// callback, which tells it (`HandleContext.handleDidClose`) and releases it. `closesOnFailure`:
    /// `initialize` leaves the handle initialized when it fails (`uv_spawn`), so the memory is
    /// freed by a close instead of at once.
    init(
        _ name: String, byteCount: Int = MemoryLayout<Handle>.size, alignment: Int = MemoryLayout<Handle>.alignment,
        closesOnFailure: Bool = false, initialize: (UnsafeMutablePointer<Handle>) -> Int32, context: HandleContext
    ) throws(LoopError) {
        // At least `OwnHandles.alignment`: the record of UVLoop's handles has one bit per that.
        let raw = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: max(alignment, OwnHandles.alignment))
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        let pointer = raw.bindMemory(to: Handle.self, capacity: 1)
        OwnHandles.insert(raw)
        let status = initialize(pointer)
        guard status == 0 else {
            if closesOnFailure {
                // The call initialized the handle before it failed (uv_spawn): libuv frees it
                // only through a close, whose callback sees no context and frees the memory.
                uv_close(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_handle_t.self), handleClosed)
            } else {
                OwnHandles.remove(raw)
                raw.deallocate()
            }
            throw LoopError.libuv(status, name)
        }
        self.pointer = pointer
        // Unmanaged: libuv carries the context as a `void *`; the close callback releases it.
        base.pointee.data = Unmanaged.passRetained(context).toOpaque()
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

    /// Closes the handle; libuv calls back in a later closing phase (`LibUVHandle.closed`), which
    /// tells the context, releases it and frees the memory. Closing twice does nothing.
    func close() {
        if uv_is_closing(base) != 0 { return }
        uv_close(base, closedCallback)
    }

    /// The close callback of every handle made by `LibUVHandle`, for a kind that closes in its own
    /// way (`uv_tcp_close_reset`).
    var closedCallback: uv_close_cb { handleClosed }

    /// The context kept in the `data` field of the handle at `handle`, borrowed for the duration of
    /// a callback. `Context` must be the class the handle was made with.
    @inline(__always)
    static func context<Context: HandleContext>(of handle: UnsafeMutableRawPointer, as: Context.Type) -> Context {
        let data = handle.assumingMemoryBound(to: uv_handle_t.self).pointee.data!
        // Unmanaged: borrowed; the handle holds the owning reference until its close callback.
        return unsafeDowncast(Unmanaged<HandleContext>.fromOpaque(data).takeUnretainedValue(), to: Context.self)
    }

    /// Calls `body` with the context kept in the `data` field of the handle at `handle`, without
    /// retaining it: for the callbacks that run once per read or write. `Context` must be the
    /// class the handle was made with.
    @inline(__always)
    static func withContext<Context: HandleContext, Result>(
        of handle: UnsafeMutableRawPointer, as: Context.Type, _ body: (Context) -> Result
    ) -> Result {
        let data = handle.assumingMemoryBound(to: uv_handle_t.self).pointee.data!
        // Unmanaged, guaranteed: the handle holds the owning reference until its close callback,
        // which libuv never runs while one of the handle's callbacks is on the stack.
        return Unmanaged<HandleContext>.fromOpaque(data)._withUnsafeGuaranteedRef { context in
            body(unsafeDowncast(context, to: Context.self))
        }
    }

    /// Sets what the handle's C callback calls, for a handle made before its owner existed.
    func onFire(_ fire: @escaping () -> Void) { callback.fire = fire }

    /// Sets what the C callback of a handle that reports two values calls.
    func onEvent(_ fire: @escaping (Int32, Int32) -> Void) { callback.fireWithEvent = fire }

    private var callback: HandleCallback { Self.context(of: UnsafeMutableRawPointer(pointer), as: HandleCallback.self) }

    /// Calls the Swift callback of the handle whose `uv_handle_t` is `handle`: what every C
    /// callback of these handles does.
    @inline(__always)
    static func fire(_ handle: UnsafeMutableRawPointer?) {
        guard let handle, handle.assumingMemoryBound(to: uv_handle_t.self).pointee.data != nil else { return }
        context(of: handle, as: HandleCallback.self).fire()
    }

    /// Calls the Swift callback of a handle made with `init(_:initialize:fireWithEvent:onClose:)`
    /// with the two values its C callback got.
    @inline(__always)
    static func fire(_ handle: UnsafeMutableRawPointer?, _ status: Int32, _ events: Int32) {
        guard let handle, handle.assumingMemoryBound(to: uv_handle_t.self).pointee.data != nil else { return }
        context(of: handle, as: HandleCallback.self).fireWithEvent?(status, events)
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

/// What a handle's `data` field carries from `LibUVHandle.init` until its close callback: the
/// Swift side of the handle. A kind subclasses it with what its callbacks need (`HandleCallback`,
/// `UDPHandleContext`), or is one itself: every `IOHandleCore` is a `HandleContext`, and a
/// stream's core (`StreamCore`) is its own handle's context, one object instead of two.
class HandleContext {
    /// libuv is done with the handle (its close callback); its memory is freed right after.
    func handleDidClose() {}
}

/// The close callback of every handle made by `LibUVHandle`: tells the context, releases it,
/// forgets the handle's address and frees its memory, the one point at which libuv allows it.
private let handleClosed: uv_close_cb = { handle in
    guard let handle else { return }
    if let data = handle.pointee.data {
        // Unmanaged: the owning reference taken in `LibUVHandle.init`, released here.
        let context = Unmanaged<HandleContext>.fromOpaque(data).takeRetainedValue()
        handle.pointee.data = nil
        context.handleDidClose()
    }
    OwnHandles.remove(handle)
    UnsafeMutableRawPointer(handle).deallocate()
}

/// The Swift side of one of the loop's own handles (idle, check, prepare, wake-ups) and of the
/// simple I/O kinds (signal, poll): what its C callback calls, and what runs when it has closed.
final class HandleCallback: HandleContext {
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

    override func handleDidClose() { onClose?() }
}
