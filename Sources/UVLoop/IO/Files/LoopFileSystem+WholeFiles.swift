extension LoopFileSystem {
    /// Reads the whole file at `path`, refusing one larger than `limit` bytes, and calls
    /// `completion` on the loop's thread with its contents. Loop thread only.
    ///
    /// The file's size is checked before reading, and the count again while reading (a file that
    /// grows, or one whose size the system does not report, such as those in `/proc`), so that no
    /// more than `limit` bytes are ever held.
    /// - Parameters:
    ///   - path: the file to read.
    ///   - limit: the most bytes to accept; 16 MiB unless given.
    ///   - completion: gets the contents, or the error: ``LoopError/fileTooLarge(path:limit:)``
    ///     for a file larger than `limit`, ``LoopError/fileSystem(operation:path:code:)`` for a
    ///     failed open or read.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an invalid path or a negative limit; the
    ///   loop's refusal once it is ending. `completion` does not run then.
    public func readFile(
        at path: String, limit: Int = 16 * 1024 * 1024, _ completion: @escaping (Result<[UInt8], LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.readFile(at:limit:_:)")
        guard limit >= 0 else { throw .invalidArgument("limit must not be negative (got \(limit))") }
        try open(path) { opened in
            switch opened {
            case .failure(let error): completion(.failure(error))
            case .success(let file): WholeFileRead(file: file, limit: limit, completion: completion).start()
            }
        }
    }

    /// Reads the whole file at `path`; see ``readFile(at:limit:_:)``. Callable from any task.
    /// - Parameters:
    ///   - path: the file to read.
    ///   - limit: the most bytes to accept; 16 MiB unless given.
    /// - Returns: the file's contents.
    /// - Throws: like ``readFile(at:limit:_:)``, and ``LoopError/cancelled``.
    public func readFile(at path: String, limit: Int = 16 * 1024 * 1024) async throws(LoopError) -> [UInt8] {
        try await perform { completion throws(LoopError) in try readFile(at: path, limit: limit, completion) }
    }

    /// Replaces the file at `path` with `contents`, atomically, and calls `completion` on the
    /// loop's thread when the replacement is on the disk. Loop thread only.
    ///
    /// Readers, and the disk after a crash or power loss, see the old contents or the new ones,
    /// never a part. The bytes go to a new temporary file in the same directory
    /// (`.NAME.RANDOM.tmp`), which is flushed to the disk (`fsync`), closed, and renamed over
    /// `path`; then the directory is flushed, so that the rename itself survives a crash. On a
    /// failure before the rename the temporary file is removed and `path` is unchanged. A
    /// failure after it (opening or flushing the directory: a directory that cannot be read, or
    /// the loop's ending) is reported too, naming that step, and then `path` already holds the
    /// new contents, which a crash may still undo. The new file has
    /// `permissions` (less the umask), not those of the file it replaces; a symbolic link at
    /// `path` is replaced, not followed.
    /// - Parameters:
    ///   - path: the file to replace or create.
    ///   - contents: its new contents.
    ///   - permissions: the new file's permission bits; 0o644 unless given.
    ///   - completion: gets success, or the error: ``LoopError/fileSystem(operation:path:code:)``
    ///     naming the step that failed (`open`, `write`, `fsync`, `close`, `rename`) and `path`.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an invalid path or permissions; the loop's
    ///   refusal once it is ending. `completion` does not run then.
    public func writeFile(
        at path: String, contents: [UInt8], permissions: UInt32 = 0o644,
        _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.writeFile(at:contents:permissions:_:)")
        try Self.validate(path, "path")
        let (directory, name) = Self.split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw .invalidArgument("path must name a file, not a directory (got \(path.debugDescription))")
        }
        let write = WholeFileWrite(
            fileSystem: self, path: path, directory: directory,
            temporary: "\(directory)/.\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp",
            contents: contents, completion: completion)
        try write.start(permissions: permissions)
    }

    /// Replaces the file at `path` with `contents`, atomically; see
    /// ``writeFile(at:contents:permissions:_:)``. Callable from any task.
    /// - Parameters:
    ///   - path: the file to replace or create.
    ///   - contents: its new contents.
    ///   - permissions: the new file's permission bits; 0o644 unless given.
    /// - Throws: like ``writeFile(at:contents:permissions:_:)``, and ``LoopError/cancelled``.
    public func writeFile(at path: String, contents: [UInt8], permissions: UInt32 = 0o644) async throws(LoopError) {
        try await perform { completion throws(LoopError) in
            try writeFile(at: path, contents: contents, permissions: permissions, completion)
        }
    }

    /// The directory (`.` for a bare name) and the last part of `path`.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}

/// `readFile`'s steps on the loop's thread: the status, reads until the end, the close.
private final class WholeFileRead {
    private let file: LoopFile
    private let limit: Int
    private let completion: (Result<[UInt8], LoopError>) -> Void
    private var contents: [UInt8] = []
    private var buffer: FileBuffer?

    init(file: LoopFile, limit: Int, completion: @escaping (Result<[UInt8], LoopError>) -> Void) {
        self.file = file
        self.limit = limit
        self.completion = completion
    }

    func start() {
        attempt { () throws(LoopError) in
            try file.status { [self] status in
                switch status {
                case .failure(let error): end(.failure(error))
                case .success(let status) where status.size > limit: end(.failure(tooLarge))
                case .success(let status):
                    contents.reserveCapacity(Int(status.size))
                    // One byte past the limit tells a file that grew beyond it.
                    let room = min(max(64 * 1024, Int(status.size) + 1), limit + 1)
                    attempt { () throws(LoopError) in
                        buffer = try FileBuffer(capacity: room)
                        try readNext()
                    }
                }
            }
        }
    }

    private var tooLarge: LoopError { .fileTooLarge(path: file.path, limit: limit) }

    private func readNext() throws(LoopError) {
        guard let buffer else { return }
        try file.read(into: buffer, count: min(buffer.capacity, limit - contents.count + 1)) { [self] read in
            switch read {
            case .failure(let error): end(.failure(error))
            case .success(0): end(.success(contents))
            case .success:
                contents += buffer.bytes
                if contents.count > limit { return end(.failure(tooLarge)) }
                attempt { () throws(LoopError) in try readNext() }
            }
        }
    }

    private func attempt(_ step: () throws(LoopError) -> Void) {
        do throws(LoopError) { try step() } catch { end(.failure(error)) }
    }

    private func end(_ result: Result<[UInt8], LoopError>) {
        file.close()
        completion(result)
    }
}

/// `writeFile`'s steps on the loop's thread: the temporary file opened, written, flushed and
/// closed, the rename, the directory flushed; on a failure before the rename, the temporary file
/// closed and removed.
private final class WholeFileWrite {
    private let fileSystem: LoopFileSystem
    private let path: String
    private let directory: String
    private let temporary: String
    private let contents: [UInt8]
    private let completion: (Result<Void, LoopError>) -> Void
    private var file: LoopFile?
    /// Whether the temporary file exists (this write created it and has not renamed it).
    private var created = false

    init(
        fileSystem: LoopFileSystem, path: String, directory: String, temporary: String, contents: [UInt8],
        completion: @escaping (Result<Void, LoopError>) -> Void
    ) {
        self.fileSystem = fileSystem
        self.path = path
        self.directory = directory
        self.temporary = temporary
        self.contents = contents
        self.completion = completion
    }

    func start(permissions: UInt32) throws(LoopError) {
        try fileSystem.open(temporary, .writeOnly, options: .exclusiveCreate, permissions: permissions) { [self] opened in
            switch opened {
            case .failure(let error): fail(error)
            case .success(let file):
                self.file = file
                created = true
                attempt { () throws(LoopError) in try write(from: 0) }
            }
        }
    }

    private func write(from start: Int) throws(LoopError) {
        guard let file else { return }
        guard start < contents.count else { return try flush() }
        let buffer = try FileBuffer(capacity: contents.count - start)
        buffer.set(contents[start...])
        try file.write(from: buffer, at: Int64(start)) { [self] written in
            switch written {
            case .failure(let error): fail(error)
            case .success(let count): attempt { () throws(LoopError) in try write(from: start + count) }
            }
        }
    }

    private func flush() throws(LoopError) {
        try file?.sync { [self] synced in
            if case .failure(let error) = synced { return fail(error) }
            file?.box.value.close { [self] closeError in
                if let closeError { return fail(closeError) }
                file = nil
                attempt { () throws(LoopError) in try rename() }
            }
        }
    }

    private func rename() throws(LoopError) {
        let path = path
        try fileSystem.loop.engine.fileSystemRequests.start(
            "rename", path: temporary, completion: .count { [self] renamed in
                if case .failure(let error) = renamed { return fail(error) }
                created = false
                attempt { () throws(LoopError) in try syncDirectory() }
            }
        ) { $0.startAtomicWriteRename(to: path) }
    }

    /// Flushes the directory's entries, which makes the rename durable (Linux opens a directory
    /// for reading like a file, and fsync flushes it).
    private func syncDirectory() throws(LoopError) {
        try fileSystem.open(directory) { [self] opened in
            switch opened {
            case .failure(let error): completion(.failure(error))
            case .success(let handle):
                do throws(LoopError) {
                    try handle.sync { [self] synced in
                        handle.close()
                        completion(synced)
                    }
                } catch {
                    handle.close()
                    completion(.failure(error))
                }
            }
        }
    }

    private func attempt(_ step: () throws(LoopError) -> Void) {
        do throws(LoopError) { try step() } catch { fail(error) }
    }

    /// A step before the rename failed: the temporary file goes (the completion runs once it
    /// has), and the error names `path`.
    private func fail(_ error: LoopError) {
        file?.close()
        file = nil
        var failure = error
        if case .fileSystem(let operation, temporary, let code) = error {
            failure = .fileSystem(operation: operation, path: path, code: code)
        }
        guard created else { return completion(.failure(failure)) }
        created = false
        do throws(LoopError) {
            try fileSystem.loop.engine.fileSystemRequests.start(
                "unlink", path: temporary, completion: .count { [self] _ in completion(.failure(failure)) }
            ) { $0.startAtomicWriteUnlink() }
        } catch {
            completion(.failure(failure))
        }
    }
}
