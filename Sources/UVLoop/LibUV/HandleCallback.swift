import CLibUV

/// The Swift side of one libuv handle: what its C callback calls.
///
/// A handle's `data` field holds a retained reference to its `HandleCallback`; the reference is
/// released in the handle's close callback, together with the handle's memory, so that neither is
/// freed while libuv may still call back.
final class HandleCallback {
    let fire: () -> Void
    /// Runs in the close callback, once libuv is done with the handle: frees what the handle used
    /// besides its memory (a wake handle's file descriptor).
    let onClose: (() -> Void)?

    init(_ fire: @escaping () -> Void, onClose: (() -> Void)? = nil) {
        self.fire = fire
        self.onClose = onClose
    }

    /// Stores a retained reference in `handle.data`.
    static func attach(
        _ fire: @escaping () -> Void, onClose: (() -> Void)? = nil, to handle: UnsafeMutablePointer<uv_handle_t>
    ) {
        // Unmanaged: libuv carries the context as a `void *`; the matching release is in `closeAndFree`.
        handle.pointee.data = Unmanaged.passRetained(HandleCallback(fire, onClose: onClose)).toOpaque()
    }

    /// Calls the callback stored in `handle.data`; used by every C trampoline.
    @inline(__always)
    static func fire(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
        guard let data = handle?.pointee.data else { return }
        // Unmanaged: borrowed for the duration of the call; `attach` holds the owning reference.
        Unmanaged<HandleCallback>.fromOpaque(data).takeUnretainedValue().fire()
    }
}

/// Closes a handle allocated by `allocateHandle` and frees its memory in the close callback,
/// the only point at which libuv allows it.
func closeAndFree(_ handle: UnsafeMutablePointer<uv_handle_t>) {
    if uv_is_closing(handle) != 0 { return }
    uv_close(handle) { handle in
        guard let handle else { return }
        if let data = handle.pointee.data {
            let callback = Unmanaged<HandleCallback>.fromOpaque(data)
            callback.takeUnretainedValue().onClose?()
            callback.release()
            handle.pointee.data = nil
        }
        UnsafeMutableRawPointer(handle).deallocate()
    }
}

/// Allocates zeroed memory for a libuv handle of type `Handle`.
func allocateHandle<Handle>(_: Handle.Type) -> UnsafeMutablePointer<Handle> {
    let raw = UnsafeMutableRawPointer.allocate(
        byteCount: MemoryLayout<Handle>.size, alignment: MemoryLayout<Handle>.alignment)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Handle>.size)
    return raw.bindMemory(to: Handle.self, capacity: 1)
}

extension UnsafeMutablePointer {
    /// The same memory seen as the `uv_handle_t` every libuv handle type begins with.
    @inline(__always)
    var asHandle: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_handle_t.self)
    }
}
