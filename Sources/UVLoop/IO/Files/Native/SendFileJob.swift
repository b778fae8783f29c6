import CLibUV
import Glibc

/// One `sendfile(2)` call on libuv's thread pool: from an open file to a stream's socket, at most
/// `count` bytes from `offset`. The socket is non-blocking, so the call never waits for the peer:
/// it sends what the socket's buffer takes, or fails with `EAGAIN` when it takes nothing.
///
/// Not `uv_fs_sendfile`: libuv 1.44 tries `copy_file_range` first, whose `EINVAL` for a socket
/// sends it to its emulation, which copies through user space and blocks a pool thread in
/// `poll` while the peer is slow.
final class SendFileJob: ThreadPoolJob {
    let input: Int32
    /// A duplicate of the stream's socket that the job owns, closed when it finishes.
    let output: Int32
    let offset: Int64
    let count: Int
    /// The transfer told on the loop's thread; the box is only opened there.
    let transfer: LoopConfinedObject<StreamFileTransfer>

    init(input: Int32, output: Int32, offset: Int64, count: Int, transfer: LoopConfinedObject<StreamFileTransfer>) {
        self.input = input
        self.output = output
        self.offset = offset
        self.count = count
        self.transfer = transfer
    }

    func willQueue(_ work: ThreadPoolWork) -> Bool { true }

    func runOnThreadPool(_ work: ThreadPoolWork) {
        var position = off_t(offset)
        var sent: Int
        repeat {
            sent = Glibc.sendfile(output, input, &position, count)
        } while sent == -1 && errno == EINTR
        work.storeResult(sent >= 0 ? sent : -Int(errno))
    }

    func finishOnLoop(_ work: ThreadPoolWork, cancelled: Bool) {
        // `output` is the job's own duplicate of the socket (see `StreamFileTransfer.sendChunk`).
        TransferDescriptors.close(output)
        transfer.value.sendDidFinish(cancelled ? nil : work.takeResult(Int.self))
    }
}

extension StreamConnectionCore {
    /// The stream's socket (`uv_fileno`), or -1.
    var socketDescriptor: Int32 { handle.descriptor }
}

extension StreamHandle {
    /// The handle's descriptor (`uv_fileno`), or -1 when it has none.
    var descriptor: Int32 {
        var fd: uv_os_fd_t = -1
        return uv_fileno(handle.base, &fd) == 0 ? fd : -1
    }
}

/// Descriptor calls a file transfer makes on the loop's thread.
enum TransferDescriptors {
    /// A duplicate of `descriptor` (close-on-exec), to poll a stream's socket for writability
    /// beside libuv's own watcher of the original; -1 on failure.
    static func duplicate(_ descriptor: Int32) -> Int32 { fcntl(descriptor, F_DUPFD_CLOEXEC, 3) }

    static func close(_ descriptor: Int32) { _ = Glibc.close(descriptor) }

    /// The last call's error, as a negative code.
    static var lastError: Int32 { -errno }

    /// Ends both directions of a socket, which wakes a poll waiting on it.
    static func shutdown(_ descriptor: Int32) { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }

    static let wouldBlock = -Int(EAGAIN)
    /// Errors that say the destination cannot take `sendfile` (copying works instead).
    static let unsupported: Set<Int> = [-Int(EINVAL), -Int(ENOSYS), -Int(EOPNOTSUPP)]
}
