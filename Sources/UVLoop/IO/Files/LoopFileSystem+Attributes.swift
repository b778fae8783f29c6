import CLibUV
import Glibc

/// What ``LoopFileSystem/checkAccess(to:for:_:)`` asks of a path.
public struct FileAccess: OptionSet, Sendable {
    /// The `access` mode bits (`R_OK`, `W_OK`, `X_OK`; none for existence).
    public let rawValue: Int32

    /// Access from `access`'s mode bits.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// That the path exists (`F_OK`): the empty set.
    public static let exists: FileAccess = []
    /// That the caller may read it (`R_OK`).
    public static let read = FileAccess(rawValue: R_OK)
    /// That the caller may write it (`W_OK`).
    public static let write = FileAccess(rawValue: W_OK)
    /// That the caller may execute it, or search it when it is a directory (`X_OK`).
    public static let execute = FileAccess(rawValue: X_OK)
}

extension LoopFileSystem {
    /// Sets the permission bits of `path` (`chmod`; a symbolic link's target), and calls
    /// `completion` on the loop's thread. Loop thread only.
    /// - Parameters:
    ///   - permissions: the bits, at most `0o7777` (with set-user-ID, set-group-ID, sticky).
    ///   - path: the file or directory.
    ///   - completion: gets success or the error: `UV_ENOENT`, `UV_EPERM` when the caller does
    ///     not own the file.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path, one with a zero byte or
    ///   permissions above `0o7777`; ``LoopError/shutDown`` (``LoopError/detached``) when the loop
    ///   no longer accepts work.
    public func setPermissions(_ permissions: UInt32, at path: String, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.setPermissions(_:at:_:)")
        try Self.validate(path, "path")
        try Self.validate(permissions: permissions)
        try requests.start("chmod", path: path, completion: .count { completion($0.map { _ in }) }) { $0.startChangeMode(permissions) }
    }

    /// Sets the permission bits of `path`; see ``setPermissions(_:at:_:)``. Callable from any
    /// task.
    /// - Throws: like ``setPermissions(_:at:_:)``, and ``LoopError/cancelled``.
    public func setPermissions(_ permissions: UInt32, at path: String) async throws(LoopError) {
        try await perform { completion throws(LoopError) in try setPermissions(permissions, at: path) { completion($0) } }
    }

    /// Sets the access and modification times of `path` (`utime`, or `lutime` for a symbolic link
    /// itself), and calls `completion` on the loop's thread. Loop thread only.
    ///
    /// The times are since the Unix epoch, as in ``FileStatus/accessed`` and
    /// ``FileStatus/modified``; libuv carries them as seconds in a `Double`, so they are kept to
    /// about a microsecond.
    /// - Parameters:
    ///   - path: the file.
    ///   - accessed: the new access time.
    ///   - modified: the new modification time.
    ///   - followingSymlinks: for a symbolic link, whether to set what it points to (the default)
    ///     or the link itself.
    ///   - completion: gets success or the error: `UV_ENOENT`, `UV_EPERM` or `UV_EACCES` when the
    ///     caller does not own the file.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func setTimes(
        at path: String, accessed: Duration, modified: Duration, followingSymlinks: Bool = true,
        _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.setTimes(at:accessed:modified:followingSymlinks:_:)")
        try Self.validate(path, "path")
        let accessedSeconds = Self.seconds(accessed)
        let modifiedSeconds = Self.seconds(modified)
        try requests.start(followingSymlinks ? "utime" : "lutime", path: path, completion: .count { completion($0.map { _ in }) }) {
            $0.startSetTimes(accessed: accessedSeconds, modified: modifiedSeconds, followingSymlinks: followingSymlinks)
        }
    }

    /// Sets the access and modification times of `path`; see
    /// ``setTimes(at:accessed:modified:followingSymlinks:_:)``. Callable from any task.
    /// - Throws: like ``setTimes(at:accessed:modified:followingSymlinks:_:)``, and
    ///   ``LoopError/cancelled``.
    public func setTimes(at path: String, accessed: Duration, modified: Duration, followingSymlinks: Bool = true) async throws(LoopError) {
        try await perform { completion throws(LoopError) in
            try setTimes(at: path, accessed: accessed, modified: modified, followingSymlinks: followingSymlinks) { completion($0) }
        }
    }

    /// Sets the owner and group of `path` (`chown`, or `lchown` for a symbolic link itself), and
    /// calls `completion` on the loop's thread. Loop thread only.
    /// - Parameters:
    ///   - path: the file.
    ///   - userID: the new owner, or nil to keep it.
    ///   - groupID: the new group, or nil to keep it.
    ///   - followingSymlinks: for a symbolic link, whether to change what it points to (the
    ///     default) or the link itself.
    ///   - completion: gets success or the error: `UV_ENOENT`, `UV_EPERM` when the caller may not
    ///     give the file away (only a privileged process may change the owner).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func setOwner(
        at path: String, userID: UInt32?, groupID: UInt32?, followingSymlinks: Bool = true,
        _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.setOwner(at:userID:groupID:followingSymlinks:_:)")
        try Self.validate(path, "path")
        try requests.start(followingSymlinks ? "chown" : "lchown", path: path, completion: .count { completion($0.map { _ in }) }) {
            $0.startChangeOwner(userID: userID ?? .max, groupID: groupID ?? .max, followingSymlinks: followingSymlinks)
        }
    }

    /// Sets the owner and group of `path`; see
    /// ``setOwner(at:userID:groupID:followingSymlinks:_:)``. Callable from any task.
    /// - Throws: like ``setOwner(at:userID:groupID:followingSymlinks:_:)``, and
    ///   ``LoopError/cancelled``.
    public func setOwner(at path: String, userID: UInt32?, groupID: UInt32?, followingSymlinks: Bool = true) async throws(LoopError) {
        try await perform { completion throws(LoopError) in
            try setOwner(at: path, userID: userID, groupID: groupID, followingSymlinks: followingSymlinks) { completion($0) }
        }
    }

    /// Checks that `path` exists and that this process may use it as `access` says (`access`,
    /// with the real user and group IDs), and calls `completion` on the loop's thread. Loop
    /// thread only.
    ///
    /// A process running as root may read and write every file and search every directory:
    /// the check then fails only for a missing path, or for execution of a file with no execute
    /// bit.
    /// - Parameters:
    ///   - path: the path to check.
    ///   - access: what to check; ``FileAccess/exists`` (the default) checks only that it exists.
    ///   - completion: gets success or the error: `UV_ENOENT` for a missing path, `UV_EACCES` when
    ///     the access is not allowed.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func checkAccess(to path: String, for access: FileAccess = .exists, _ completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.checkAccess(to:for:_:)")
        try Self.validate(path, "path")
        try requests.start("access", path: path, completion: .count { completion($0.map { _ in }) }) { $0.startAccess(mode: access.rawValue) }
    }

    /// Checks that `path` exists and may be used as `access` says; see
    /// ``checkAccess(to:for:_:)``. Callable from any task.
    /// - Throws: like ``checkAccess(to:for:_:)``, and ``LoopError/cancelled``.
    public func checkAccess(to path: String, for access: FileAccess = .exists) async throws(LoopError) {
        try await perform { completion throws(LoopError) in try checkAccess(to: path, for: access) { completion($0) } }
    }

    /// Whether `path` exists (following a symbolic link: a link to nothing does not), and calls
    /// `completion` with the answer on the loop's thread. Loop thread only.
    /// - Parameters:
    ///   - path: the path to look for.
    ///   - completion: gets true or false; an error only when the system cannot tell (`UV_EACCES`
    ///     for a directory on the way that may not be searched, `UV_ELOOP`).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func exists(_ path: String, _ completion: @escaping (Result<Bool, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.exists(_:_:)")
        try Self.validate(path, "path")
        try requests.start(
            "access", path: path,
            completion: .count { result in
                switch result {
                case .success: completion(.success(true))
                case .failure(let error) where error.fileSystemCode == UV_ENOENT.rawValue || error.fileSystemCode == UV_ENOTDIR.rawValue:
                    completion(.success(false))
                case .failure(let error): completion(.failure(error))
                }
            }
        ) { $0.startAccess(mode: F_OK) }
    }

    /// Whether `path` exists; see ``exists(_:_:)``. Callable from any task.
    /// - Returns: whether it exists.
    /// - Throws: like ``exists(_:_:)``, and ``LoopError/cancelled``.
    public func exists(_ path: String) async throws(LoopError) -> Bool {
        try await perform { completion throws(LoopError) in try exists(path) { completion($0) } }
    }

    /// `duration` in seconds, as libuv takes times.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
