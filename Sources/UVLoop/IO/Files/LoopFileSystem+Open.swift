extension LoopFileSystem {
    /// Opens the file at `path` and calls `completion` on the loop's thread with the open
    /// ``LoopFile``. Loop thread only.
    ///
    /// The file stays open until `close()` or the loop's ending.
    /// - Parameters:
    ///   - path: the file to open.
    ///   - mode: reading, writing, or both.
    ///   - options: creation, truncation, appending (see ``LoopFile/OpenOptions``).
    ///   - permissions: the permission bits of a file that ``LoopFile/OpenOptions/create``
    ///     creates (less the process's umask); 0o644 unless given.
    ///   - completion: gets the open file, or the error (`UV_ENOENT` for a missing file opened
    ///     without `create`, `UV_EEXIST` for an existing one with `exclusiveCreate`).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an invalid path, permissions beyond
    ///   0o7777, or `truncate` or `append` with ``LoopFile/AccessMode/readOnly``; the loop's
    ///   refusal once it is ending. `completion` does not run then.
    public func open(
        _ path: String, _ mode: LoopFile.AccessMode = .readOnly, options: LoopFile.OpenOptions = [],
        permissions: UInt32 = 0o644, _ completion: @escaping (Result<LoopFile, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.open(_:_:options:permissions:_:)")
        try Self.validate(path, "path")
        guard permissions <= 0o7777 else {
            throw .invalidArgument("permissions must be at most 0o7777 (got 0o\(String(permissions, radix: 8)))")
        }
        if mode == .readOnly, !options.isDisjoint(with: [.truncate, .append]) {
            throw .invalidArgument("truncate and append need writing access: open with .writeOnly or .readWrite")
        }
        let loop = loop
        try loop.engine.fileSystemRequests.start(
            "open", path: path,
            completion: .request { request in completion(Self.opened(request, path: path, loop: loop)) }
        ) { $0.startOpen(flags: mode.flags | options.rawValue, mode: Int32(permissions)) }
    }

    /// Opens the file at `path`; see ``open(_:_:options:permissions:_:)``. Callable from any
    /// task.
    /// - Parameters:
    ///   - path: the file to open.
    ///   - mode: reading, writing, or both.
    ///   - options: creation, truncation, appending.
    ///   - permissions: the permission bits of a file created.
    /// - Returns: the open file.
    /// - Throws: like ``open(_:_:options:permissions:_:)``, and ``LoopError/cancelled``.
    public func open(
        _ path: String, _ mode: LoopFile.AccessMode = .readOnly, options: LoopFile.OpenOptions = [],
        permissions: UInt32 = 0o644
    ) async throws(LoopError) -> LoopFile {
        try await perform { completion throws(LoopError) in
            try open(path, mode, options: options, permissions: permissions, completion)
        }
    }

    /// The open file for a finished `open` request; a descriptor opened after the loop's ending
    /// withdrew the request is closed at once.
    private static func opened(_ request: FileSystemRequest, path: String, loop: Loop) -> Result<LoopFile, LoopError> {
        let result = request.result
        if let endedBy = request.endedBy {
            if result >= 0 { request.closeDescriptorNow(Int32(truncatingIfNeeded: result)) }
            return .failure(endedBy)
        }
        guard result >= 0 else { return .failure(request.error(code: Int32(truncatingIfNeeded: result))) }
        let core = LoopFileCore(engine: loop.engine, path: path, descriptor: Int32(truncatingIfNeeded: result))
        return .success(LoopFile(core: core, loop: loop))
    }
}
