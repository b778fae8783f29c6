extension LoopFile {
    /// Reads up to `count` bytes at `offset`; see ``read(into:count:at:_:)``. Callable from any
    /// task.
    /// - Parameters:
    ///   - count: the most bytes to read.
    ///   - offset: where to read; nil reads at the file's position and moves it.
    /// - Returns: the bytes read: fewer than `count` near the end of the file, none at its end.
    /// - Throws: like ``read(into:count:at:_:)``, and ``LoopError/cancelled``.
    public func read(upTo count: Int, at offset: Int64? = nil) async throws(LoopError) -> [UInt8] {
        guard count > 0 else {
            if count == 0 { return [] }
            throw .invalidArgument("read count must not be negative (got \(count))")
        }
        return try await loop.performFileSystemRequest { completion throws(LoopError) in
            let buffer = try FileBuffer(capacity: count)
            try self.read(into: buffer, at: offset) { result in
                completion(result.map { _ in Array(buffer.bytes) })
            }
        }
    }

    /// Writes all of `bytes` at `offset`; see ``write(from:at:_:)``. Callable from any task.
    ///
    /// A write the system takes only in part (a full disk) goes on with the rest until all is
    /// written or it fails.
    /// - Parameters:
    ///   - bytes: the bytes to write.
    ///   - offset: where to write; nil writes at the file's position and moves it (at the end in
    ///     ``OpenOptions/append`` mode).
    /// - Throws: like ``write(from:at:_:)``, and ``LoopError/cancelled``.
    public func write(_ bytes: [UInt8], at offset: Int64? = nil) async throws(LoopError) {
        guard !bytes.isEmpty else { return }
        try await loop.performFileSystemRequest { (completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) in
            let buffer = try FileBuffer(capacity: bytes.count)
            buffer.set(bytes)
            try self.writeAll(buffer, from: 0, at: offset, completion)
        }
    }

    /// Writes the buffer's bytes from `start` on, again after a partial write.
    private func writeAll(
        _ buffer: FileBuffer, from start: Int, at offset: Int64?, _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        if start > 0 {
            let rest = Array(buffer.bytes[start...])
            buffer.set(rest)
        }
        try write(from: buffer, at: offset) { result in
            switch result {
            case .failure(let error): completion(.failure(error))
            case .success(let written) where written == buffer.count: completion(.success(()))
            case .success(let written):
                do throws(LoopError) {
                    try self.writeAll(buffer, from: written, at: offset.map { $0 + Int64(written) }, completion)
                } catch {
                    completion(.failure(error))
                }
            }
        }
    }

    /// Flushes the file's data and metadata to the disk (`fsync`); see ``sync(_:)``. Callable
    /// from any task.
    /// - Throws: like ``sync(_:)``, and ``LoopError/cancelled``.
    public func sync() async throws(LoopError) {
        try await loop.performFileSystemRequest { completion throws(LoopError) in try self.sync(completion) }
    }

    /// Flushes the file's data to the disk (`fdatasync`); see ``dataSync(_:)``. Callable from
    /// any task.
    /// - Throws: like ``dataSync(_:)``, and ``LoopError/cancelled``.
    public func dataSync() async throws(LoopError) {
        try await loop.performFileSystemRequest { completion throws(LoopError) in try self.dataSync(completion) }
    }

    /// Sets the file's size (`ftruncate`); see ``truncate(to:_:)``. Callable from any task.
    /// - Parameter size: the new size in bytes.
    /// - Throws: like ``truncate(to:_:)``, and ``LoopError/cancelled``.
    public func truncate(to size: Int64) async throws(LoopError) {
        try await loop.performFileSystemRequest { completion throws(LoopError) in try self.truncate(to: size, completion) }
    }

    /// Reads the open file's status (`fstat`); see ``status(_:)``. Callable from any task.
    /// - Returns: the status.
    /// - Throws: like ``status(_:)``, and ``LoopError/cancelled``.
    public func status() async throws(LoopError) -> FileStatus {
        try await loop.performFileSystemRequest { completion throws(LoopError) in try self.status(completion) }
    }
}
