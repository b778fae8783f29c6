extension LoopFile {
    /// Reads up to `count` bytes at `offset` into `buffer`, and calls `completion` on the loop's
    /// thread with the number read (0 at the end of the file; fewer than asked near it). The
    /// bytes are then `buffer`'s contents (``FileBuffer/bytes``). Loop thread only.
    ///
    /// Nothing is allocated per call: the buffer is yours, and the request is one of the loop's
    /// reused ones. Pass the same `completion` closure each time (a stored property, say) for a
    /// reader that allocates nothing at all: a closure literal that captures values is itself an
    /// allocation.
    /// - Parameters:
    ///   - buffer: where the bytes go; it is the read's until `completion` runs.
    ///   - count: the most bytes to read; nil reads up to the buffer's capacity.
    ///   - offset: where in the file to read (`pread`); nil reads at the file's position and
    ///     moves it (`read`).
    ///   - completion: gets the number of bytes read, or the error.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a negative offset or a count outside
    ///   `0...buffer.capacity`; ``LoopError/fileClosed`` after `close()`; the loop's refusal
    ///   once it is ending. `completion` does not run then.
    public func read(
        into buffer: FileBuffer, count: Int? = nil, at offset: Int64? = nil,
        _ completion: @escaping (Result<Int, LoopError>) -> Void
    ) throws(LoopError) {
        let core = core("LoopFile.read(into:count:at:_:)")
        let count = count ?? buffer.capacity
        guard count >= 0, count <= buffer.capacity else {
            throw .invalidArgument("read count must be from 0 to the buffer's capacity of \(buffer.capacity) bytes (got \(count))")
        }
        try core.read(into: buffer, count: count, offset: try Self.validate(offset), completion)
    }

    /// Writes what `buffer` holds (its ``FileBuffer/count`` bytes) at `offset`, and calls
    /// `completion` on the loop's thread with the number written. Loop thread only.
    ///
    /// The number is smaller than the buffer's count only when the disk fills up or the file
    /// reaches its size limit; write the rest again to get the error. Nothing is allocated per
    /// call (see ``read(into:count:at:_:)``).
    /// - Parameters:
    ///   - buffer: the bytes to write; it is the write's until `completion` runs.
    ///   - offset: where in the file to write (`pwrite`); nil writes at the file's position and
    ///     moves it (`write`), or at the end in ``OpenOptions/append`` mode.
    ///   - completion: gets the number of bytes written, or the error.
    /// - Throws: like ``read(into:count:at:_:)``.
    public func write(
        from buffer: FileBuffer, at offset: Int64? = nil, _ completion: @escaping (Result<Int, LoopError>) -> Void
    ) throws(LoopError) {
        let core = core("LoopFile.write(from:at:_:)")
        try core.write(from: buffer, offset: try Self.validate(offset), completion)
    }

    /// Flushes the file's data and metadata to the disk (`fsync`), and calls `completion` on
    /// the loop's thread once the disk has them. Loop thread only.
    /// - Parameter completion: gets success, or the error.
    /// - Throws: ``LoopError/fileClosed`` after `close()`; the loop's refusal once it is ending.
    public func sync(_ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        try core("LoopFile.sync(_:)").start("fsync", completion: .count { completion($0.map { _ in }) }) {
            $0.startSync(descriptor: $1, dataOnly: false)
        }
    }

    /// Flushes the file's data to the disk (`fdatasync`): like ``sync(_:)``, without metadata
    /// that reading the data does not need (the modification time). Loop thread only.
    /// - Parameter completion: gets success, or the error.
    /// - Throws: like ``sync(_:)``.
    public func dataSync(_ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        try core("LoopFile.dataSync(_:)").start("fdatasync", completion: .count { completion($0.map { _ in }) }) {
            $0.startSync(descriptor: $1, dataOnly: true)
        }
    }

    /// Sets the file's size to `size` bytes (`ftruncate`): cuts what lies beyond, or extends
    /// it with zeros. Needs writing access. Loop thread only.
    /// - Parameters:
    ///   - size: the new size in bytes.
    ///   - completion: gets success, or the error (`UV_EINVAL` or `UV_EBADF` on a file opened
    ///     for reading only).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a negative size; like ``sync(_:)``.
    public func truncate(to size: Int64, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        let core = core("LoopFile.truncate(to:_:)")
        guard size >= 0 else { throw .invalidArgument("a file's size must not be negative (got \(size))") }
        try core.start("ftruncate", completion: .count { completion($0.map { _ in }) }) {
            $0.startTruncate(descriptor: $1, length: size)
        }
    }

    /// Reads the open file's status (`fstat`): its size, type, permissions and times. Loop
    /// thread only.
    /// - Parameter completion: gets the status, or the error.
    /// - Throws: like ``sync(_:)``.
    public func status(_ completion: @escaping (Result<FileStatus, LoopError>) -> Void) throws(LoopError) {
        try core("LoopFile.status(_:)").start("fstat", completion: .status(completion)) {
            $0.startFileStatus(descriptor: $1)
        }
    }

    /// libuv's offset for an optional one: -1 for the file's position.
    static func validate(_ offset: Int64?) throws(LoopError) -> Int64 {
        guard let offset else { return -1 }
        guard offset >= 0 else { throw .invalidArgument("a file offset must not be negative (got \(offset)); pass nil for the file's position") }
        return offset
    }
}
