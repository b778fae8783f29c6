import CLibUV
import Glibc

/// How a write went: all of it taken by the kernel at once, the rest queued, or refused.
enum StreamWriteOutcome {
    case written
    case queued(Int)
    case failed(Int32)
}

/// One `uv_tcp_t`, `uv_pipe_t` or `uv_tty_t`, seen as the `uv_stream_t` they begin with: a `LibUVHandle`
/// (allocated zeroed, initialized, freed only in its close callback). Loop thread only.
///
/// Its `data` field holds its connection's or listener's core (a `StreamCore`, retained) from
/// `init` until the close callback, which tells the core and releases it; so the core stays alive
/// as long as libuv may call it, and each callback reaches it with one load.
struct StreamHandle: NativeIOHandle {
    enum Kind { case tcp, pipe, tty }

    let handle: LibUVHandle<uv_stream_t>
    /// The simulated socket behind a stream of a simulated network's host (see
    /// `StreamHandle+Simulation.swift`), nil for a real one: each verb below that the simulation
    /// answers checks it first (one predictable branch on a real stream).
    ///
    @inline(__always)
    var simulated: SimulatedStream? { simulatedReference?.takeUnretainedValue() }

    /// Unmanaged: keeps this struct a plain value (no retain and release each time a core reads
    /// its handle). Safe because the core holds the simulated stream strongly until libuv's close
    /// callback (`StreamCore.simulated`), and a core uses its handle only while open, before that.
    var simulatedReference: Unmanaged<SimulatedStream>?
    /// Last: Swift lays a struct's fields out in declaration order, and this one byte then ends
    /// the struct (17 bytes rather than 24 with padding in the middle), so that the field a core
    /// keeps after its handle (`IOHandleCore.registryIndex`) fits in the rest of the word.
    let kind: Kind

    var pointer: UnsafeMutablePointer<uv_stream_t> { handle.pointer }

    /// Allocates and initializes a handle of `kind` on `loop`, for `core`, which libuv's callbacks
    /// then report to. `socketFamily` (for TCP) creates the socket at once (`uv_tcp_init_ex`), so
    /// that options can be set on it before binding.
    init(
        _ kind: Kind, loop: NativeLoop, core: StreamCore, socketFamily: Int32? = nil
    ) throws(LoopError) {
        let name = switch kind {
        case .tcp: socketFamily == nil ? "uv_tcp_init" : "uv_tcp_init_ex"
        case .pipe, .tty: "uv_pipe_init"
        }
        handle = try LibUVHandle(
            name, byteCount: kind.byteCount, alignment: Kind.alignment,
            initialize: { stream in
                let raw = UnsafeMutableRawPointer(stream)
                switch kind {
                case .tcp:
                    let tcp = raw.assumingMemoryBound(to: uv_tcp_t.self)
                    if let socketFamily { return uv_tcp_init_ex(loop.pointer, tcp, UInt32(socketFamily)) }
                    return uv_tcp_init(loop.pointer, tcp)
                case .pipe, .tty:
                    return uv_pipe_init(loop.pointer, raw.assumingMemoryBound(to: uv_pipe_t.self), 0)
                }
            },
            context: core)
        self.kind = kind
    }

    private var base: UnsafeMutablePointer<uv_handle_t> { handle.base }

    var tcp: UnsafeMutablePointer<uv_tcp_t> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_tcp_t.self)
    }

    var pipe: UnsafeMutablePointer<uv_pipe_t> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_pipe_t.self)
    }

    /// The core of the handle at `stream`, borrowed for the duration of a callback.
    @inline(__always)
    static func context(of stream: UnsafeMutableRawPointer) -> StreamCore {
        LibUVHandle<uv_stream_t>.context(of: stream, as: StreamCore.self)
    }

    /// Calls `body` with the core of the handle at `stream`, not retained (see
    /// `LibUVHandle.withContext`): for the callbacks of each read and write.
    @inline(__always)
    static func withContext<Result>(of stream: UnsafeMutableRawPointer, _ body: (StreamCore) -> Result) -> Result {
        LibUVHandle<uv_stream_t>.withContext(of: stream, as: StreamCore.self, body)
    }

    // MARK: closing

    /// Closes the handle; libuv calls back in a later closing phase (after failing queued writes
    /// with `UV_ECANCELED`), which tells the core, releases it and frees the memory.
    /// A terminal is put back in normal mode first; a stream opened on a descriptor then lets it
    /// go (see `OpenedDescriptor`). Closing twice does nothing.
    func close() {
        let context = Self.context(of: pointer)
        if let simulated { simulated.close(reset: false) }
        if kind == .tty { _ = setTerminalMode(UV_TTY_MODE_NORMAL) }
        handle.close()
        context.openedDescriptor?.release()
    }

    /// Closes a TCP handle with a reset (`SO_LINGER` 0: the peer reads `ECONNRESET`); a plain
    /// close when libuv refuses (a pipe, or writes already shut down).
    func closeWithReset() {
        if uv_is_closing(base) != 0 { return }
        if let simulated {
            simulated.close(reset: true)
            return handle.close()
        }
        if kind == .tcp, uv_tcp_close_reset(tcp, handle.closedCallback) == 0 {
            Self.context(of: pointer).openedDescriptor?.release()
            return
        }
        close()
    }

    /// Lets the handle stop keeping the loop alive on its own (`uv_unref`).
    func unref() { handle.unref() }

    // MARK: reading

    /// Starts reading into the context's read buffer (`uv_read_start`).
    func startReading() -> Int32 {
        if let simulated { return simulated.startReading() }
        return uv_read_start(pointer, { handle, _, buffer in
            buffer!.pointee = uv_buf_t(base: StreamHandle.readBuffer(of: handle!), len: StreamReadBuffer.size)
        }, { stream, count, buffer in
            StreamHandle.withContext(of: UnsafeMutableRawPointer(stream!)) { context in
                if count > 0 {
                    // libuv hands back the buffer the allocation callback gave it.
                    context.streamDidRead(UnsafeRawBufferPointer(start: buffer!.pointee.base, count: count))
                } else if count < 0 {
                    context.streamReadDidEnd(Int32(count))
                }
            }
        })
    }

    /// The loop's read buffer, for the stream whose handle is `handle`: reached through the
    /// loop's `let`s from the core, each lent (`withContext`, `withValue`), so that lending it to
    /// libuv before every read retains nothing.
    @inline(__always)
    private static func readBuffer(of handle: UnsafeMutablePointer<uv_handle_t>) -> UnsafeMutablePointer<CChar>? {
        withContext(of: UnsafeMutableRawPointer(handle)) { context in
            context.loop.streamReadBuffer.withValue { $0.base }
        }
    }

    /// Stops reading (`uv_read_stop`); the kernel keeps what arrives, up to its buffer.
    func stopReading() {
        if let simulated { return simulated.stopReading() }
        _ = uv_read_stop(pointer)
    }

    // MARK: writing

    /// Writes `bytes`: first what the kernel takes at once (`uv_try_write`, when `tryFirst`, that
    /// is, when nothing is queued before them), then queues the rest with `uv_write`, copied into
    /// a pooled request. A write error of `uv_try_write` queues everything, and `uv_write`
    /// reports it to the core.
    func write(
        _ bytes: UnsafeRawBufferPointer, tryFirst: Bool, completion: ((LoopError?) -> Void)?
    ) -> StreamWriteOutcome {
        if let simulated { return simulated.write(bytes, completion: completion) }
        guard let start = bytes.baseAddress, bytes.count > 0 else { return .written }
        var offset = 0
        if tryFirst {
            var buffer = uv_buf_t(
                base: UnsafeMutablePointer(mutating: start.assumingMemoryBound(to: CChar.self)), len: bytes.count)
            let written = uv_try_write(pointer, &buffer, 1)
            if written == bytes.count { return .written }
            if written > 0 { offset = Int(written) }
        }
        let context = Self.context(of: pointer)
        let request = context.takeWriteRequest()
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        request.fill(with: rest, completion: completion)
        var buffer = uv_buf_t(base: request.storage!.assumingMemoryBound(to: CChar.self), len: rest.count)
        // Unmanaged: the request stays retained while libuv holds it; the write callback releases it.
        request.request.pointee.data = Unmanaged.passRetained(request).toOpaque()
        let status = uv_write(request.request, pointer, &buffer, 1) { request, status in
            let owner = Unmanaged<StreamWriteRequest>.fromOpaque(request!.pointee.data!).takeRetainedValue()
            StreamHandle.withContext(of: UnsafeMutableRawPointer(request!.pointee.handle!)) { context in
                let (byteCount, completion) = owner.empty()
                context.recycle(owner)
                context.streamWriteDidFinish(byteCount: byteCount, completion: completion, status: status)
            }
        }
        guard status == 0 else {
            Unmanaged<StreamWriteRequest>.fromOpaque(request.request.pointee.data!).release()
            _ = request.empty()
            context.recycle(request)
            return .failed(status)
        }
        return .queued(rest.count)
    }

    /// Shuts down the writing side once queued writes are done (`uv_shutdown`); `done` gets the
    /// status. Returns libuv's status for the call (`done` is not called when it fails).
    func shutdownWrites(_ done: @escaping (Int32) -> Void) -> Int32 {
        if let simulated { return simulated.shutdownWrites(done) }
        let request = StreamRequest<uv_shutdown_t>(done)
        let status = uv_shutdown(request.request, pointer) { request, status in
            StreamRequest<uv_shutdown_t>.finish(request!, status: status)
        }
        if status != 0 { request.abandon() }
        return status
    }

    // MARK: listening and connecting

    /// Binds a TCP handle to `address` (`uv_tcp_bind`) or a pipe to its path (`uv_pipe_bind`).
    func bind(_ address: SocketAddress) -> Int32 {
        switch kind {
        case .tcp:
            return address.withNative { uv_tcp_bind(tcp, $0, 0) }
        case .pipe:
            return uv_pipe_bind(pipe, address.path ?? "")
        case .tty:
            return Int32(UV_EINVAL.rawValue)
        }
    }

    /// Sets `SO_REUSEPORT` on a TCP handle whose socket exists (made with a `socketFamily`).
    func setReusePort() -> Int32 {
        var fd: uv_os_fd_t = -1
        let status = uv_fileno(base, &fd)
        guard status == 0 else { return status }
        var one: Int32 = 1
        let result = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        return result == 0 ? 0 : -errno
    }

    /// Starts listening (`uv_listen`); the core hears of each connection to accept.
    func listen(backlog: Int32) -> Int32 {
        uv_listen(pointer, backlog) { server, status in
            StreamHandle.context(of: UnsafeMutableRawPointer(server!)).streamConnectionIsReady(status)
        }
    }

    /// Accepts the pending connection into `client`, a new handle of the same kind (`uv_accept`).
    func accept(into client: StreamHandle) -> Int32 {
        // A simulated client was made with the connection it accepts (`takeAccepted`).
        if simulated != nil { return client.simulated == nil ? UV_EINVAL.rawValue : 0 }
        return uv_accept(pointer, client.pointer)
    }

    /// Connects to `address` (`uv_tcp_connect`, `uv_pipe_connect`); `done` gets the status.
    /// Returns libuv's status for the call (`done` is not called when it fails).
    func connect(to address: SocketAddress, _ done: @escaping (Int32) -> Void) -> Int32 {
        let request = StreamRequest<uv_connect_t>(done)
        let callback: uv_connect_cb = { request, status in StreamRequest<uv_connect_t>.finish(request!, status: status) }
        switch kind {
        case .tcp:
            let status = address.withNative { uv_tcp_connect(request.request, tcp, $0, callback) }
            if status != 0 { request.abandon() }
            return status
        case .pipe:
            uv_pipe_connect(request.request, pipe, address.path ?? "", callback)
            return 0
        case .tty:
            request.abandon()
            return Int32(UV_EINVAL.rawValue)
        }
    }

    // MARK: addresses and options

    /// The address the handle is bound to (`getsockname`), or nil when it has none.
    var localAddress: SocketAddress? {
        if let simulated { return simulated.localAddress }
        switch kind {
        case .tcp: return SocketAddress.reading { uv_tcp_getsockname(tcp, $0, $1) }
        case .pipe: return SocketAddress.readingPath { uv_pipe_getsockname(pipe, $0, $1) }
        case .tty: return nil
        }
    }

    /// How a connection on this handle reads its addresses, and from which descriptor: `.none`
    /// (and -1) for a terminal, a simulated stream or a handle without a descriptor.
    var addressSource: (ConnectionAddresses.Source, Int32) {
        guard simulated == nil, kind != .tty else { return (.none, -1) }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(base, &fd) == 0 else { return (.none, -1) }
        return (kind == .tcp ? .internet : .unixDomain, fd)
    }

    func setNoDelay(_ enabled: Bool) -> Int32 {
        if simulated != nil { return 0 }
        return uv_tcp_nodelay(tcp, enabled ? 1 : 0)
    }

    func setKeepAlive(_ enabled: Bool, delaySeconds: UInt32) -> Int32 {
        if simulated != nil { return 0 }
        return uv_tcp_keepalive(tcp, enabled ? 1 : 0, delaySeconds)
    }
}

/// A one-shot request (`uv_connect_t`, `uv_shutdown_t`) and what its callback calls: allocated
/// per call, retained in its `data` field until the callback, freed after it.
final class StreamRequest<Request> {
    let request: UnsafeMutablePointer<Request>
    private let done: (Int32) -> Void

    init(_ done: @escaping (Int32) -> Void) {
        request = .allocate(capacity: 1)
        UnsafeMutableRawPointer(request).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Request>.size)
        self.done = done
        // Unmanaged: libuv carries the request's owner as a `void *` until its callback, which
        // releases it (`finish`), or `abandon` when libuv refused the request.
        UnsafeMutableRawPointer(request).assumingMemoryBound(to: uv_req_t.self).pointee.data =
            Unmanaged.passRetained(self).toOpaque()
    }

    deinit { request.deallocate() }

    /// libuv refused the request: nothing will call back.
    func abandon() {
        Unmanaged.passUnretained(self).release()
    }

    static func finish(_ request: UnsafeMutablePointer<Request>, status: Int32) {
        let data = UnsafeMutableRawPointer(request).assumingMemoryBound(to: uv_req_t.self).pointee.data!
        let owner = Unmanaged<StreamRequest<Request>>.fromOpaque(data).takeRetainedValue()
        owner.done(status)
    }
}
