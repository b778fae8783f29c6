import CLibUV
import Glibc

extension LoopFileSystem {
    /// Makes a directory at `path` (`mkdir`) and calls `completion` on the loop's thread. Loop
    /// thread only.
    ///
    /// With `withIntermediateDirectories`, this is `mkdir -p`: missing parents are made first
    /// (with `permissions` plus the owner's write and search bits, so that the next level can be
    /// made in them), and a directory that already exists, at any level, is not an error.
    /// - Parameters:
    ///   - path: the directory to make.
    ///   - permissions: its permission bits, at most `0o7777`, less the process's umask.
    ///   - withIntermediateDirectories: whether to make missing parents and accept an existing
    ///     directory.
    ///   - completion: gets success or the error: `UV_EEXIST` for an existing path (with
    ///     intermediate directories, only when it is not a directory), `UV_ENOENT` for a missing
    ///     parent (without them), `UV_ENOTDIR` when a part of the path is a file, `UV_EACCES`.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path, one with a zero byte, or
    ///   permissions above `0o7777`; ``LoopError/shutDown`` (``LoopError/detached``) when the loop
    ///   no longer accepts work.
    public func makeDirectory(
        at path: String, permissions: UInt32 = 0o777, withIntermediateDirectories: Bool = false,
        _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.makeDirectory(at:permissions:withIntermediateDirectories:_:)")
        try Self.validate(path, "path")
        try Self.validate(permissions: permissions)
        try makeDirectory(path, permissions, parents: withIntermediateDirectories, existingAllowed: withIntermediateDirectories, FileSystemSteps(), completion)
    }

    /// Makes a directory at `path`; see ``makeDirectory(at:permissions:withIntermediateDirectories:_:)``.
    /// Callable from any task. Cancelling the task stops making intermediate directories; those
    /// already made stay.
    /// - Parameters:
    ///   - path: the directory to make.
    ///   - permissions: its permission bits, at most `0o7777`, less the process's umask.
    ///   - withIntermediateDirectories: whether to make missing parents and accept an existing
    ///     directory, as `mkdir -p`.
    /// - Throws: like ``makeDirectory(at:permissions:withIntermediateDirectories:_:)``, and
    ///   ``LoopError/cancelled``.
    public func makeDirectory(at path: String, permissions: UInt32 = 0o777, withIntermediateDirectories: Bool = false) async throws(LoopError) {
        try Self.validate(path, "path")
        try Self.validate(permissions: permissions)
        try await performSteps { steps, completion throws(LoopError) in
            try makeDirectory(path, permissions, parents: withIntermediateDirectories, existingAllowed: withIntermediateDirectories, steps, completion)
        }
    }

    /// Removes the file, symbolic link or empty directory at `path` (`unlink`, or `rmdir` for a
    /// directory) and calls `completion` on the loop's thread. A symbolic link is removed, not
    /// what it points to. Loop thread only.
    /// - Parameters:
    ///   - path: what to remove.
    ///   - completion: gets success or the error: `UV_ENOENT` for a missing path, `UV_ENOTEMPTY`
    ///     (from `rmdir`) for a directory with entries (use ``removeTree(at:_:)``), `UV_EACCES`
    ///     or `UV_EPERM` when the directory it is in does not allow it.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func removeItem(at path: String, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.removeItem(at:_:)")
        try Self.validate(path, "path")
        try removeItem(path, FileSystemSteps(), completion)
    }

    /// Removes the file, symbolic link or empty directory at `path`; see ``removeItem(at:_:)``.
    /// Callable from any task.
    /// - Throws: like ``removeItem(at:_:)``, and ``LoopError/cancelled``.
    public func removeItem(at path: String) async throws(LoopError) {
        try Self.validate(path, "path")
        try await performSteps { steps, completion throws(LoopError) in try removeItem(path, steps, completion) }
    }

    /// Makes a new, empty directory with a unique name (`mkdtemp`), readable and writable only by
    /// its owner, and calls `completion` with its path on the loop's thread. Loop thread only.
    /// - Parameters:
    ///   - prefix: the start of its name; six random characters follow.
    ///   - directory: where to make it; nil for the system's directory for temporary files:
    ///     `TMPDIR` when set, otherwise `/tmp`.
    ///   - completion: gets the new directory's path, or the error (naming the template, such as
    ///     `/tmp/app-XXXXXX`).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a prefix with a `/` or a zero byte, or a
    ///   directory that is empty or has a zero byte; ``LoopError/shutDown``
    ///   (``LoopError/detached``) when the loop no longer accepts work.
    public func makeTemporaryDirectory(
        prefix: String = "uvloop-", in directory: String? = nil, _ completion: @escaping (Result<String, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.makeTemporaryDirectory(prefix:in:_:)")
        let template = try Self.temporaryTemplate(prefix: prefix, in: directory)
        try requests.start(
            "mkdtemp", path: template,
            completion: .request { request in
                completion(Self.resultPath(of: request))
            }
        ) { $0.startMakeTemporaryDirectory(template: template) }
    }

    /// Makes a new, empty directory with a unique name; see
    /// ``makeTemporaryDirectory(prefix:in:_:)``. Callable from any task.
    /// - Parameters:
    ///   - prefix: the start of its name; six random characters follow.
    ///   - directory: where to make it; nil for `TMPDIR`, or `/tmp` when that is not set.
    /// - Returns: the new directory's path.
    /// - Throws: like ``makeTemporaryDirectory(prefix:in:_:)``, and ``LoopError/cancelled``.
    public func makeTemporaryDirectory(prefix: String = "uvloop-", in directory: String? = nil) async throws(LoopError) -> String {
        _ = try Self.temporaryTemplate(prefix: prefix, in: directory)
        return try await perform { completion throws(LoopError) in
            try makeTemporaryDirectory(prefix: prefix, in: directory) { completion($0) }
        }
    }

    /// The system's directory for temporary files: `TMPDIR` when set and not empty, otherwise
    /// `/tmp`.
    public static var temporaryDirectory: String {
        if let value = getenv("TMPDIR"), value.pointee != 0 { return String(cString: value) }
        return "/tmp"
    }
}

extension LoopFileSystem {
    static func validate(permissions: UInt32) throws(LoopError) {
        guard permissions <= 0o7777 else {
            throw .invalidArgument("permissions must be at most 0o7777 (got 0o\(String(permissions, radix: 8))); give the permission bits only")
        }
    }

    static func temporaryTemplate(prefix: String, in directory: String?) throws(LoopError) -> String {
        guard !prefix.utf8.contains(UInt8(ascii: "/")) else {
            throw .invalidArgument("prefix must not contain '/' (got \(prefix.debugDescription)); give the directory as `in:`")
        }
        try validate(prefix + "X", "prefix")
        var parent = directory ?? temporaryDirectory
        try validate(parent, "directory")
        while parent.count > 1, parent.hasSuffix("/") { parent.removeLast() }
        return parent == "/" ? "/\(prefix)XXXXXX" : "\(parent)/\(prefix)XXXXXX"
    }

    /// `path` without its last component and trailing slashes; nil when it has no parent to make.
    static func parent(of path: String) -> String? {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        let parent = trimmed[..<slash]
        return parent.isEmpty ? nil : String(parent)
    }

    /// `mkdir`, then, if `parents`, the missing parents first; with `existingAllowed`, an existing
    /// directory is success (checked with `stat`).
    func makeDirectory(
        _ path: String, _ permissions: UInt32, parents: Bool, existingAllowed: Bool, _ steps: FileSystemSteps,
        _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        try steps.start(
            requests, "mkdir", path: path,
            completion: .count { result in
                guard case .failure(let error) = result else { return completion(.success(())) }
                switch error.fileSystemCode {
                case UV_ENOENT.rawValue where parents:
                    guard let parent = Self.parent(of: path) else { return completion(.failure(error)) }
                    continuing(completion) { () throws(LoopError) in
                        try makeDirectory(parent, permissions | 0o300, parents: true, existingAllowed: true, steps) { made in
                            guard case .success = made else { return completion(made) }
                            continuing(completion) { () throws(LoopError) in
                                try makeDirectory(path, permissions, parents: false, existingAllowed: true, steps, completion)
                            }
                        }
                    }
                case UV_EEXIST.rawValue where existingAllowed:
                    continuing(completion) { () throws(LoopError) in
                        try steps.start(
                            requests, "stat", path: path,
                            completion: .status { status in
                                if case .success(let status) = status, status.type == .directory { return completion(.success(())) }
                                completion(.failure(error))
                            }
                        ) { $0.startStatus(followingSymlinks: true) }
                    }
                default: completion(.failure(error))
                }
            }
        ) { $0.startMakeDirectory(permissions: permissions) }
    }

    /// `unlink`, or `rmdir` when `unlink` says the path is a directory.
    func removeItem(_ path: String, _ steps: FileSystemSteps, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        try steps.start(
            requests, "unlink", path: path,
            completion: .count { result in
                guard case .failure(let error) = result else { return completion(.success(())) }
                guard error.fileSystemCode == UV_EISDIR.rawValue else { return completion(.failure(error)) }
                continuing(completion) { () throws(LoopError) in
                    try steps.start(requests, "rmdir", path: path, completion: .count { completion($0.map { _ in }) }) { $0.startRemoveDirectory() }
                }
            }
        ) { $0.startUnlink() }
    }
}
