import CLibUV
import Glibc

/// Passing descriptors over a Unix-domain socket (`SCM_RIGHTS`), through libuv's IPC pipes: a
/// pipe made with `uv_pipe_init(ipc: 1)` sends a handle's descriptor with `uv_write2` and queues
/// the descriptors it receives with the bytes they came with, until `uv_accept` takes them.
extension StreamHandle {
    /// Whether the handle is a pipe that carries descriptors (opened with `ipc`).
    var carriesDescriptors: Bool {
        kind == .pipe && pipe.pointee.ipc != 0
    }

    /// How many received descriptors wait to be taken (`uv_pipe_pending_count`).
    var receivedDescriptorCount: Int {
        carriesDescriptors ? Int(uv_pipe_pending_count(pipe)) : 0
    }

    /// Takes the next received descriptor: accepts it into a pipe handle made for the moment,
    /// duplicates its descriptor (close-on-exec, 3 or above) and closes the handle, which closes
    /// libuv's copy. Returns nil when none waits.
    func takeReceivedDescriptor(loop: NativeLoop) throws(LoopError) -> Int32? {
        guard receivedDescriptorCount > 0 else { return nil }
        let holder = try LibUVHandle<uv_pipe_t>(
            "uv_pipe_init", initialize: { uv_pipe_init(loop.pointer, $0, 0) }, fire: {})
        defer { holder.close() }
        let accepted = UnsafeMutableRawPointer(holder.pointer).assumingMemoryBound(to: uv_stream_t.self)
        let status = uv_accept(pointer, accepted)
        guard status == 0 else { throw .libuv(status, "uv_accept") }
        var received: uv_os_fd_t = -1
        let filed = uv_fileno(holder.base, &received)
        guard filed == 0 else { throw .libuv(filed, "uv_fileno") }
        let descriptor = fcntl(received, F_DUPFD_CLOEXEC, 3)
        guard descriptor != -1 else { throw .libuv(-errno, "fcntl(F_DUPFD_CLOEXEC)") }
        return descriptor
    }

    /// Sends a copy of `descriptor` with `bytes` (at least one) to the peer (`uv_write2`): the
    /// copy travels in a pipe handle opened on a duplicate, which closes once the write is done
    /// (or failed); `done` then gets libuv's status. Returns libuv's status for the call (`done`
    /// is not called when it fails).
    func send(descriptor: Int32, with bytes: [UInt8], loop: NativeLoop, _ done: @escaping (Int32) -> Void) -> Int32 {
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
        guard duplicate != -1 else { return -errno }
        let carrier: DescriptorCarrier
        do {
            carrier = DescriptorCarrier(try LibUVHandle("uv_pipe_init", initialize: { uv_pipe_init(loop.pointer, $0, 0) }, fire: {}))
        } catch {
            Glibc.close(duplicate)
            return Int32(UV_ENOMEM.rawValue)
        }
        let opened = uv_pipe_open(carrier.handle.pointer, duplicate)
        guard opened == 0 else {
            Glibc.close(duplicate)
            carrier.close()
            return opened
        }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        storage.copyBytes(from: bytes)
        let request = StreamRequest<uv_write_t> { status in
            storage.deallocate()
            carrier.close()
            done(status)
        }
        var buffer = uv_buf_t(base: storage.baseAddress!.assumingMemoryBound(to: CChar.self), len: bytes.count)
        let carried = UnsafeMutableRawPointer(carrier.handle.pointer).assumingMemoryBound(to: uv_stream_t.self)
        // libuv copies the uv_buf_t array but not the bytes: they stay allocated until the write
        // callback (through `StreamRequest`), which frees them.
        let status = uv_write2(request.request, pointer, &buffer, 1, carried) { request, status in
            StreamRequest<uv_write_t>.finish(request!, status: status)
        }
        guard status == 0 else {
            request.abandon()
            storage.deallocate()
            carrier.close()
            return status
        }
        // libuv writes at once when nothing is queued before, and forgets the handle once its
        // descriptor is sent: the carrier can close now, in the same closing phase as the stream
        // would, so that a detach right after leaves nothing for a later turn.
        if request.request.pointee.send_handle == nil { carrier.close() }
        return 0
    }
}

/// The pipe handle that carries a descriptor being sent, until libuv has sent it: closed once,
/// as soon as libuv no longer needs it. Loop thread only.
final class DescriptorCarrier {
    let handle: LibUVHandle<uv_pipe_t>
    private var closed = false

    init(_ handle: LibUVHandle<uv_pipe_t>) {
        self.handle = handle
    }

    /// Closes the handle (and its duplicate descriptor), once.
    func close() {
        guard !closed else { return }
        closed = true
        handle.close()
    }
}
