extension LoopFileSystem {
    /// Reads the whole file at `path`, refusing one larger than `limit` bytes. Callable from any
    /// task.
    ///
    /// The file's size is checked before reading, and again while reading (a file that grows, or
    /// one whose size the system does not report, such as those in `/proc`), so that no more
    /// than `limit` bytes are ever held.
    /// - Parameters:
    ///   - path: the file to read.
    ///   - limit: the most bytes to accept; 16 MiB unless given.
    /// - Returns: the file's contents.
    /// - Throws: ``LoopError/fileTooLarge(path:limit:)`` for a file larger than `limit`;
    ///   ``LoopError/fileSystem(operation:path:code:)`` for a failed open or read;
    ///   ``LoopError/invalidArgument(_:)`` for an invalid path or a negative limit;
    ///   ``LoopError/cancelled``; the loop's refusal once it is ending.
    public func readFile(at path: String, limit: Int = 16 * 1024 * 1024) async throws(LoopError) -> [UInt8] {
        guard limit >= 0 else { throw .invalidArgument("limit must not be negative (got \(limit))") }
        let file = try await open(path)
        do throws(LoopError) {
            let size = try await file.status().size
            guard size <= limit else { throw .fileTooLarge(path: path, limit: limit) }
            var contents: [UInt8] = []
            contents.reserveCapacity(Int(size))
            // One byte past the limit tells a file that grew beyond it.
            let chunk = max(64 * 1024, Int(size) + 1)
            while true {
                let piece = try await file.read(upTo: min(chunk, limit - contents.count + 1))
                if piece.isEmpty { break }
                contents += piece
                guard contents.count <= limit else { throw .fileTooLarge(path: path, limit: limit) }
            }
            try await file.close()
            return contents
        } catch {
            file.closeWithoutWaiting()
            throw error
        }
    }

    /// Replaces the file at `path` with `contents`, atomically: readers, and the disk after a
    /// crash or power loss, see the old contents or the new ones, never a part. Callable from any
    /// task.
    ///
    /// The bytes go to a new temporary file in the same directory (`.NAME.RANDOM.tmp`), which is
    /// flushed to the disk (`fsync`), closed, and renamed over `path`; then the directory is
    /// flushed, so that the rename itself survives a crash. On failure the temporary file is
    /// removed and `path` is unchanged. The new file has `permissions` (less the umask), not
    /// those of the file it replaces; a symbolic link at `path` is replaced, not followed.
    /// - Parameters:
    ///   - path: the file to replace or create.
    ///   - contents: its new contents.
    ///   - permissions: the new file's permission bits; 0o644 unless given.
    /// - Throws: ``LoopError/fileSystem(operation:path:code:)`` naming the step that failed
    ///   (`open`, `write`, `fsync`, `rename`) and `path`;
    ///   ``LoopError/invalidArgument(_:)`` for an invalid path or permissions;
    ///   ``LoopError/cancelled``; the loop's refusal once it is ending.
    public func writeFile(at path: String, contents: [UInt8], permissions: UInt32 = 0o644) async throws(LoopError) {
        try Self.validate(path, "path")
        let (directory, name) = Self.split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw .invalidArgument("path must name a file, not a directory (got \(path.debugDescription))")
        }
        let temporary = "\(directory)/.\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp"
        let file: LoopFile
        do throws(LoopError) {
            file = try await open(temporary, .writeOnly, options: .exclusiveCreate, permissions: permissions)
        } catch {
            throw Self.naming(path, in: error, forTemporary: temporary)
        }
        do throws(LoopError) {
            try await file.write(contents, at: 0)
            try await file.sync()
            try await file.close()
            _ = try await request("rename", path: temporary) { $0.startAtomicWriteRename(to: path) }
        } catch {
            file.closeWithoutWaiting()
            _ = try? await request("unlink", path: temporary) { $0.startAtomicWriteUnlink() }
            throw Self.naming(path, in: error, forTemporary: temporary)
        }
        try await syncDirectory(directory)
    }

    /// Flushes a directory's entries to the disk: what makes a rename inside it durable.
    private func syncDirectory(_ directory: String) async throws(LoopError) {
        // Linux opens a directory for reading like a file, and fsync flushes its entries.
        let handle = try await open(directory)
        do throws(LoopError) {
            try await handle.sync()
        } catch {
            handle.closeWithoutWaiting()
            throw error
        }
        try await handle.close()
    }

    /// Runs one path request and returns its count (a descriptor for `open`).
    private func request(
        _ operation: StaticString, path: String, _ start: @escaping @Sendable (FileSystemRequest) -> Int32
    ) async throws(LoopError) -> Int {
        try await perform { completion throws(LoopError) in
            try loop.engine.fileSystemRequests.start(operation, path: path, completion: .count(completion)) { start($0) }
        }
    }

    /// Errors name the file being replaced: the temporary name is an inner detail.
    private static func naming(_ path: String, in error: LoopError, forTemporary temporary: String) -> LoopError {
        guard case .fileSystem(let operation, temporary, let code) = error else { return error }
        return .fileSystem(operation: operation, path: path, code: code)
    }

    /// The directory (`.` for a bare name) and the last part of `path`.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}

extension LoopFile {
    /// Closes the file from async code without waiting (the sync `close()`, which async
    /// code would otherwise not pick).
    func closeWithoutWaiting() {
        let box = box
        _ = loop.onLoopThread { box.value.close() }
    }
}
