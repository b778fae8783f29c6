import CLibUV

/// Renaming, links and resolving paths.
///
/// An operation on two paths names both in its error's `path`, in the order of the command
/// that does the same (`mv`, `ln`, `ln -s`, `cp`): the existing path, ` -> `, the new one, as in
/// `rename "/srv/a.tmp -> /srv/a" failed: ENOENT`.
extension LoopFileSystem {
    /// Renames (moves) `path` to `newPath` (`rename`), replacing a file at `newPath`, or an empty
    /// directory when `path` is a directory, and calls `completion` on the loop's thread. Both
    /// must be on one file system. Loop thread only.
    /// - Parameters:
    ///   - path: what to rename.
    ///   - newPath: its new path.
    ///   - completion: gets success or the error, whose path is `"path -> newPath"`: `UV_ENOENT`
    ///     when `path` or `newPath`'s directory is missing, `UV_ENOTEMPTY` for a directory over a
    ///     directory with entries, `UV_EISDIR` or `UV_ENOTDIR` for a file over a directory or the
    ///     reverse, `UV_EXDEV` across file systems (copy, then remove, instead).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func rename(_ path: String, to newPath: String, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.rename(_:to:_:)")
        try Self.validate(path, "path")
        try Self.validate(newPath, "newPath")
        try requests.start("rename", path: "\(path) -> \(newPath)", completion: .count { completion($0.map { _ in }) }) {
            $0.startRename(from: path, to: newPath)
        }
    }

    /// Renames (moves) `path` to `newPath`; see ``rename(_:to:_:)``. Callable from any task.
    /// - Throws: like ``rename(_:to:_:)``, and ``LoopError/cancelled``.
    public func rename(_ path: String, to newPath: String) async throws(LoopError) {
        try await perform { completion throws(LoopError) in try rename(path, to: newPath) { completion($0) } }
    }

    /// Makes `linkPath` a new name of the existing file `target` (a hard link, `link`), and calls
    /// `completion` on the loop's thread. Loop thread only.
    /// - Parameters:
    ///   - linkPath: the new name; it must not exist.
    ///   - target: the existing file (not a directory), on the same file system.
    ///   - completion: gets success or the error, whose path is `"target -> linkPath"`:
    ///     `UV_EEXIST` when `linkPath` exists, `UV_ENOENT` when `target` is missing, `UV_EPERM`
    ///     for a directory, `UV_EXDEV` across file systems.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func makeHardLink(at linkPath: String, to target: String, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.makeHardLink(at:to:_:)")
        try Self.validate(linkPath, "linkPath")
        try Self.validate(target, "target")
        try requests.start("link", path: "\(target) -> \(linkPath)", completion: .count { completion($0.map { _ in }) }) {
            $0.startHardLink(existing: target, new: linkPath)
        }
    }

    /// Makes `linkPath` a new name of the existing file `target`; see ``makeHardLink(at:to:_:)``.
    /// Callable from any task.
    /// - Throws: like ``makeHardLink(at:to:_:)``, and ``LoopError/cancelled``.
    public func makeHardLink(at linkPath: String, to target: String) async throws(LoopError) {
        try await perform { completion throws(LoopError) in try makeHardLink(at: linkPath, to: target) { completion($0) } }
    }

    /// Makes a symbolic link at `linkPath` that points to `target` (`symlink`), and calls
    /// `completion` on the loop's thread. Loop thread only.
    /// - Parameters:
    ///   - linkPath: the link to make; it must not exist.
    ///   - target: what the link points to, stored as given: it need not exist, and a relative
    ///     target is resolved from the link's directory when the link is followed.
    ///   - completion: gets success or the error, whose path is `"target -> linkPath"` (as in
    ///     `ln -s target linkPath`): `UV_EEXIST` when `linkPath` exists, `UV_ENOENT` when its
    ///     directory is missing.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func makeSymbolicLink(at linkPath: String, to target: String, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.makeSymbolicLink(at:to:_:)")
        try Self.validate(linkPath, "linkPath")
        try Self.validate(target, "target")
        try requests.start("symlink", path: "\(target) -> \(linkPath)", completion: .count { completion($0.map { _ in }) }) {
            $0.startSymbolicLink(target: target, link: linkPath)
        }
    }

    /// Makes a symbolic link at `linkPath` that points to `target`; see
    /// ``makeSymbolicLink(at:to:_:)``. Callable from any task.
    /// - Throws: like ``makeSymbolicLink(at:to:_:)``, and ``LoopError/cancelled``.
    public func makeSymbolicLink(at linkPath: String, to target: String) async throws(LoopError) {
        try await perform { completion throws(LoopError) in try makeSymbolicLink(at: linkPath, to: target) { completion($0) } }
    }

    /// Reads what the symbolic link at `path` points to (`readlink`), as stored (a relative
    /// target stays relative), and calls `completion` with it on the loop's thread. Loop thread
    /// only.
    /// - Parameters:
    ///   - path: the symbolic link.
    ///   - completion: gets the target, or the error: `UV_EINVAL` when `path` is not a symbolic
    ///     link, `UV_ENOENT` when it is missing.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func symbolicLinkTarget(at path: String, _ completion: @escaping (Result<String, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.symbolicLinkTarget(at:_:)")
        try Self.validate(path, "path")
        try requests.start("readlink", path: path, completion: .request { completion(Self.resultPath(of: $0)) }) { $0.startReadLink() }
    }

    /// Reads what the symbolic link at `path` points to; see ``symbolicLinkTarget(at:_:)``.
    /// Callable from any task.
    /// - Returns: the link's target, as stored.
    /// - Throws: like ``symbolicLinkTarget(at:_:)``, and ``LoopError/cancelled``.
    public func symbolicLinkTarget(at path: String) async throws(LoopError) -> String {
        try await perform { completion throws(LoopError) in try symbolicLinkTarget(at: path) { completion($0) } }
    }

    /// Resolves `path` to the absolute path it stands for (`realpath`): every symbolic link
    /// followed, `.` and `..` and repeated slashes removed; and calls `completion` with it on the
    /// loop's thread. Loop thread only.
    /// - Parameters:
    ///   - path: the path to resolve; a relative one is taken from the working directory.
    ///   - completion: gets the resolved path, or the error: `UV_ENOENT` when a part of it (or
    ///     what a link points to) is missing, `UV_ELOOP` for links that point to each other.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func realPath(of path: String, _ completion: @escaping (Result<String, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.realPath(of:_:)")
        try Self.validate(path, "path")
        try requests.start("realpath", path: path, completion: .request { completion(Self.resultPath(of: $0)) }) { $0.startRealPath() }
    }

    /// Resolves `path` to the absolute path it stands for; see ``realPath(of:_:)``. Callable from
    /// any task.
    /// - Returns: the resolved, absolute path.
    /// - Throws: like ``realPath(of:_:)``, and ``LoopError/cancelled``.
    public func realPath(of path: String) async throws(LoopError) -> String {
        try await perform { completion throws(LoopError) in try realPath(of: path) { completion($0) } }
    }

    /// The path a finished `readlink`, `realpath` or `mkdtemp` made, or its error.
    static func resultPath(of request: FileSystemRequest) -> Result<String, LoopError> {
        request.countResult.flatMap { _ in
            request.resultPath.map { .success($0) } ?? .failure(request.error(code: UV_EIO.rawValue))  // libuv gave no path
        }
    }
}
