import Glibc

/// Which end of a named pipe (FIFO) to open: see ``Loop/openFIFO(atPath:for:)``.
public enum PipeEnd: Sendable, Hashable {
    /// The end that reads what writers write.
    case reading
    /// The end that writes.
    case writing
}

extension Loop {
    /// Makes an anonymous pipe (`pipe`) and opens both ends as streams: what one writes, the
    /// other reads, in order, until the writing end closes (the reading end then reads the end).
    ///
    /// ```swift
    /// let (reader, writer) = try loop.makePipe()
    /// try writer.write(Array("ping".utf8))
    /// writer.close()                  // the reader reads "ping", then the end
    /// ```
    ///
    /// A pipe has no half-close: ``StreamConnection/shutdownWrites(_:)`` fails with
    /// `UV_ENOTSOCK` once the queued writes are out; close the writing end to end the stream.
    /// Both ends are the streams' own (``DescriptorOwnership/take``): closing each closes its
    /// descriptor, and the loop's shutdown and detach close both. The descriptors are
    /// close-on-exec. Callable from any thread.
    /// - Returns: the reading end and the writing end, open.
    /// - Throws: ``LoopError/libuv(function:code:)`` when the kernel refuses (`UV_EMFILE`: too
    ///   many open descriptors); ``LoopError/shutDown`` (or ``LoopError/detached``) once the loop
    ///   no longer accepts work.
    public func makePipe() throws(LoopError) -> (read: StreamConnection, write: StreamConnection) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw .libuv(-errno, "pipe") }
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        return try openOnLoopThread { () throws(LoopError) in
            let reader: StreamConnection
            do throws(LoopError) {
                reader = StreamConnection(core: try StreamConnectionCore(loop: self, descriptor: readEnd, kind: .pipe, ownership: .take))
            } catch {
                close(readEnd)
                close(writeEnd)
                throw error
            }
            do throws(LoopError) {
                let writer = StreamConnection(core: try StreamConnectionCore(loop: self, descriptor: writeEnd, kind: .pipe, ownership: .take))
                return (reader, writer)
            } catch {
                reader.close()
                close(writeEnd)
                throw error
            }
        }
    }

    /// Opens a named pipe (a FIFO, made with `mkfifo`) as a stream, without blocking.
    ///
    /// ```swift
    /// let reader = try loop.openFIFO(atPath: path, for: .reading)
    /// let writer = try loop.openFIFO(atPath: path, for: .writing)
    /// ```
    ///
    /// The reading end opens at once, writers or not; it reads the end when its last writer
    /// closes (and a writer that opens later is not heard: open the FIFO again to wait for the
    /// next one). The writing end opens only while a reader has the FIFO open. The stream owns
    /// the descriptor it opened. Callable from any thread.
    /// - Parameters:
    ///   - path: the FIFO's path.
    ///   - end: which end to open.
    /// - Returns: the stream, open.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `path` is not a FIFO, or when opening
    ///   the writing end finds no reader (`ENXIO`); ``LoopError/libuv(function:code:)`` when the
    ///   kernel refuses (`UV_ENOENT`, `UV_EACCES`); ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) once the loop no longer accepts work.
    public func openFIFO(atPath path: String, for end: PipeEnd) throws(LoopError) -> StreamConnection {
        let flags = (end == .reading ? O_RDONLY : O_WRONLY) | O_NONBLOCK | O_CLOEXEC
        let descriptor = open(path, flags)
        guard descriptor != -1 else {
            let code = errno
            if code == ENXIO {
                throw .invalidArgument(
                    "no process has the FIFO \(path) open for reading, so it cannot be opened for writing yet; open its reading end first")
            }
            throw .libuv(-code, "open(\(path))")
        }
        guard OpenedDescriptor.kind(of: descriptor) == .pipe else {
            close(descriptor)
            throw .invalidArgument("\(path) is not a named pipe; make one with mkfifo, or open a file with file operations")
        }
        return try openOnLoopThread { () throws(LoopError) in
            do throws(LoopError) {
                return StreamConnection(core: try StreamConnectionCore(loop: self, descriptor: descriptor, kind: .pipe, ownership: .take))
            } catch {
                close(descriptor)
                throw error
            }
        }
    }
}
