extension StreamConnection {
    /// Sends `count` bytes of `file` from `offset` into the connection with `sendfile`: the bytes
    /// go from the file to the socket inside the kernel, never through this process's memory.
    /// Loop thread only.
    ///
    /// The transfer keeps the connection's order: it starts once the writes made before it have
    /// left, and writes (and ``shutdownWrites(_:)``) made while it runs wait until it has ended,
    /// held in memory. It follows the peer's pace: each `sendfile` call (on libuv's thread pool)
    /// sends what the socket's buffer takes, and when it takes nothing the transfer waits until
    /// the socket is writable again, so a slow peer costs neither memory nor a busy loop. A
    /// destination that cannot take `sendfile` (a connection of a simulated network, which has no
    /// socket) gets the file read and written in 64 KiB chunks, as
    /// ``write(contentsOf:from:count:_:)`` does.
    /// - Parameters:
    ///   - file: an open file of this connection's loop, opened for reading.
    ///   - offset: where in the file to start.
    ///   - count: how many bytes to send; nil sends to the end of the file.
    ///   - completion: gets the number of bytes sent (fewer than `count` when the file ends
    ///     first), or the error: ``LoopError/fileSystem(operation:path:code:)`` naming
    ///     `sendfile` and the file (`UV_EPIPE`, `UV_ECONNRESET` when the peer went away), the
    ///     connection's close reason, or ``LoopError/fileClosed``.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a negative offset or count; the
    ///   connection's close reason, ``LoopError/writesShutDown``, or ``LoopError/fileClosed``;
    ///   `completion` does not run then.
    public func sendFile(
        _ file: LoopFile, from offset: Int64 = 0, count: Int64? = nil, _ completion: @escaping (Result<Int64, LoopError>) -> Void
    ) throws(LoopError) {
        try transfer(file, offset, count, copying: false, "StreamConnection.sendFile(_:from:count:_:)", completion)
    }

    /// Writes `count` bytes of `file` from `offset` into the connection by reading it in 64 KiB
    /// chunks and writing each one once the kernel has taken the one before: for destinations
    /// where ``sendFile(_:from:count:_:)`` cannot go (an encrypting stream), or to keep the bytes
    /// in view. Loop thread only.
    ///
    /// Order and backpressure are those of ``sendFile(_:from:count:_:)``: at most one chunk is
    /// read ahead of the peer.
    /// - Parameters:
    ///   - file: an open file of this connection's loop, opened for reading.
    ///   - offset: where in the file to start.
    ///   - count: how many bytes to write; nil writes to the end of the file.
    ///   - completion: gets the number of bytes written (fewer than `count` when the file ends
    ///     first), or the error: a failed read (naming `read` and the file), a failed write
    ///     (``LoopError/libuv(function:code:)``), the connection's close reason, or
    ///     ``LoopError/fileClosed``.
    /// - Throws: like ``sendFile(_:from:count:_:)``.
    public func write(
        contentsOf file: LoopFile, from offset: Int64 = 0, count: Int64? = nil, _ completion: @escaping (Result<Int64, LoopError>) -> Void
    ) throws(LoopError) {
        try transfer(file, offset, count, copying: true, "StreamConnection.write(contentsOf:from:count:_:)", completion)
    }

    /// Sends part of `file` with `sendfile`; see ``sendFile(_:from:count:_:)``. Callable from any
    /// task. Cancelling the task does not stop the transfer (the connection's bytes would end in
    /// the middle of the file): close the connection for that.
    /// - Parameters:
    ///   - file: an open file of this connection's loop.
    ///   - offset: where in the file to start.
    ///   - count: how many bytes to send; nil sends to the end of the file.
    /// - Returns: the number of bytes sent.
    /// - Throws: like ``sendFile(_:from:count:_:)``.
    @discardableResult
    public func sendFile(_ file: LoopFile, from offset: Int64 = 0, count: Int64? = nil) async throws(LoopError) -> Int64 {
        try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<Int64>) in
            do throws(LoopError) {
                try self.sendFile(file, from: offset, count: count) { continuation.resume(with: $0) }
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in }
    }

    /// Writes part of `file` in chunks; see ``write(contentsOf:from:count:_:)``. Callable from
    /// any task; cancelling the task does not stop the transfer.
    /// - Parameters:
    ///   - file: an open file of this connection's loop.
    ///   - offset: where in the file to start.
    ///   - count: how many bytes to write; nil writes to the end of the file.
    /// - Returns: the number of bytes written.
    /// - Throws: like ``write(contentsOf:from:count:_:)``.
    @discardableResult
    public func write(contentsOf file: LoopFile, from offset: Int64 = 0, count: Int64? = nil) async throws(LoopError) -> Int64 {
        try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<Int64>) in
            do throws(LoopError) {
                try self.write(contentsOf: file, from: offset, count: count) { continuation.resume(with: $0) }
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in }
    }

    private func transfer(
        _ file: LoopFile, _ offset: Int64, _ count: Int64?, copying: Bool, _ operation: String,
        _ completion: @escaping (Result<Int64, LoopError>) -> Void
    ) throws(LoopError) {
        let core = core(operation)
        misusePrecondition(
            file.loop === loop, "UVLoop: \(operation) with a file of another loop; open the file on the connection's loop")
        guard offset >= 0 else { throw .invalidArgument("a file offset must not be negative (got \(offset))") }
        if let count, count < 0 { throw .invalidArgument("a count must not be negative (got \(count))") }
        // A connection of a simulated network has no socket for `sendfile(2)`: its file is copied
        // through the connection's writes, with the same order, water marks and completion.
        let copies = copying || core.handle.simulated != nil
        try StreamFileTransfer(
            stream: core, file: file.box.value, offset: offset, count: count, copying: copies, completion: completion
        ).start()
    }
}
