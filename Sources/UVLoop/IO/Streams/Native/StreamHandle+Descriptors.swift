import CLibUV
import Glibc

extension StreamHandle.Kind {
    /// The bytes a handle of this kind takes.
    var byteCount: Int {
        switch self {
        case .tcp: MemoryLayout<uv_tcp_t>.size
        case .pipe: MemoryLayout<uv_pipe_t>.size
        case .tty: MemoryLayout<uv_tty_t>.size
        }
    }

    /// The alignment every kind's memory gets (the strictest of the three).
    static var alignment: Int {
        max(MemoryLayout<uv_tcp_t>.alignment, MemoryLayout<uv_pipe_t>.alignment, MemoryLayout<uv_tty_t>.alignment)
    }
}

extension StreamHandle {
    /// Opens `descriptor` as a stream of `kind` on `loop` (`uv_tcp_open`, `uv_pipe_open`,
    /// `uv_tty_init`), after `opened` has prepared it (a duplicate, for a borrowed descriptor).
    /// `ipc` makes a pipe able to carry descriptors (`uv_pipe_init` with `ipc` 1). libuv's
    /// callbacks report to `core`.
    ///
    /// libuv switches the descriptor to non-blocking mode; a terminal's is reopened first
    /// (`uv_tty_init` opens its device again and moves the new file onto the descriptor's
    /// number), so that the mode does not change for other processes sharing it.
    init(
        opening opened: OpenedDescriptor, as kind: Kind, ipc: Bool, loop: NativeLoop, core: StreamCore
    ) throws(LoopError) {
        let descriptor = opened.passed
        let name = switch kind {
        case .tcp: "uv_tcp_init"
        case .pipe: "uv_pipe_init"
        case .tty: "uv_tty_init"
        }
        handle = try LibUVHandle(
            name, byteCount: kind.byteCount, alignment: Kind.alignment,
            initialize: { stream in
                let raw = UnsafeMutableRawPointer(stream)
                switch kind {
                case .tcp: return uv_tcp_init(loop.pointer, raw.assumingMemoryBound(to: uv_tcp_t.self))
                case .pipe: return uv_pipe_init(loop.pointer, raw.assumingMemoryBound(to: uv_pipe_t.self), ipc ? 1 : 0)
                case .tty: return uv_tty_init(loop.pointer, raw.assumingMemoryBound(to: uv_tty_t.self), descriptor, 0)
                }
            },
            context: core)
        self.kind = kind
        let status: Int32 = switch kind {
        case .tcp: uv_tcp_open(tcp, descriptor)
        case .pipe: uv_pipe_open(pipe, descriptor)
        case .tty: 0
        }
        guard status == 0 else {
            // The descriptor was not taken: closing the handle leaves it open.
            handle.close()
            throw .libuv(status, kind == .tcp ? "uv_tcp_open" : "uv_pipe_open")
        }
        var own: uv_os_fd_t = -1
        _ = uv_fileno(handle.base, &own)
        opened.handleDescriptor = own
        core.openedDescriptor = opened
    }

    // MARK: terminals

    private var tty: UnsafeMutablePointer<uv_tty_t> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_tty_t.self)
    }

    /// Sets a terminal's mode (`uv_tty_set_mode`); returns libuv's status.
    func setTerminalMode(_ mode: uv_tty_mode_t) -> Int32 { uv_tty_set_mode(tty, mode) }

    /// A terminal's window size (`uv_tty_get_winsize`): columns and rows, or libuv's error.
    func terminalSize() -> Result<(columns: Int, rows: Int), LoopError> {
        var width: Int32 = 0
        var height: Int32 = 0
        let status = uv_tty_get_winsize(tty, &width, &height)
        guard status == 0 else { return .failure(.libuv(status, "uv_tty_get_winsize")) }
        return .success((Int(width), Int(height)))
    }
}

/// A descriptor that someone else opened and a stream was opened on, and what closing the stream
/// does to it: a taken descriptor is closed with the stream, a borrowed one is duplicated for
/// libuv (which closes the duplicate) and left open with its file status flags restored
/// (libuv makes it non-blocking). Descriptors 0, 1 and 2 are never closed (libuv's rule).
/// Loop thread only.
final class OpenedDescriptor {
    /// The descriptor the user gave.
    let original: Int32
    /// What libuv was given: `original`, or its duplicate when borrowed.
    let passed: Int32
    /// The descriptor libuv's handle uses, which it closes (unless 0, 1 or 2): `passed`, or a
    /// terminal's reopened device (then `passed` is ours to close).
    var handleDescriptor: Int32 = -1
    /// A borrowed descriptor's file status flags, restored at close.
    private let savedFlags: Int32?
    /// Runs once, when the stream lets the descriptor go.
    var onRelease: (() -> Void)?
    private var released = false

    /// Prepares `descriptor` for a stream: duplicates it when `borrow`.
    /// - Throws: `EBADF` as libuv's error when it is not open; `EMFILE` when no duplicate can
    ///   be made.
    init(_ descriptor: Int32, borrow: Bool) throws(LoopError) {
        original = descriptor
        let flags = fcntl(descriptor, F_GETFL)
        guard flags != -1 else { throw .libuv(-errno, "fcntl") }
        if borrow {
            let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
            guard duplicate != -1 else { throw .libuv(-errno, "fcntl(F_DUPFD_CLOEXEC)") }
            passed = duplicate
            savedFlags = flags
        } else {
            passed = descriptor
            savedFlags = nil
        }
    }

    /// The stream did not open: closes a duplicate, leaves a taken descriptor with its owner.
    func abandon() {
        released = true
        if passed != original { Glibc.close(passed) }
        if let savedFlags { _ = fcntl(original, F_SETFL, savedFlags) }
    }

    /// The handle was closed (libuv has closed `handleDescriptor`): closes what libuv does not.
    func release() {
        guard !released else { return }
        released = true
        if passed != handleDescriptor, passed > 2 { Glibc.close(passed) }
        if let savedFlags { _ = fcntl(original, F_SETFL, savedFlags) }
        onRelease?()
        onRelease = nil
    }

    /// What libuv makes of `descriptor` (`uv_guess_handle`), and whether a socket listens.
    static func kind(of descriptor: Int32) -> DescriptorKind {
        switch uv_guess_handle(descriptor) {
        case UV_TTY: return .terminal
        case UV_TCP: return isListening(descriptor) ? .listeningSocket(unix: false) : .socket(unix: false)
        case UV_NAMED_PIPE:
            var status = stat()
            if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFIFO { return .pipe }
            return isListening(descriptor) ? .listeningSocket(unix: true) : .socket(unix: true)
        case UV_UDP: return .datagramSocket
        case UV_FILE: return .file
        default: return fcntl(descriptor, F_GETFD) == -1 ? .notOpen : .unknown
        }
    }

    private static func isListening(_ descriptor: Int32) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) == 0 && value != 0
    }
}

/// What a descriptor refers to, as far as opening it as a stream goes.
enum DescriptorKind: Equatable {
    case terminal
    /// A pipe or FIFO.
    case pipe
    /// A connected (or unconnected) stream socket: TCP, or Unix-domain when `unix`.
    case socket(unix: Bool)
    case listeningSocket(unix: Bool)
    case datagramSocket
    /// A regular file or a device that is not a terminal.
    case file
    case notOpen
    case unknown
}
