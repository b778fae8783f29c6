import CLibUV

/// One thin starter per libuv call on a path. Each returns libuv's status: 0 when the request is
/// on its way (the callback follows), a negative error code when libuv refused it at once.
/// Starters on one path use the request's `path`; those on two take both, since the request's
/// `path` then holds the pair as its errors name it.
///
/// Paths reach libuv through `withCString`, which lends a native string's own null-terminated
/// bytes (a short one is copied to the stack): passing a `String` where C takes a `char *`
/// would copy it into a new array first, an allocation per request. libuv copies the path it
/// keeps in the request.
extension FileSystemRequest {
    /// Runs `body` with `path` as a C string.
    @inline(__always)
    private func withPath(_ body: (UnsafePointer<CChar>) -> Int32) -> Int32 { path.withCString(body) }

    func startStatus(followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? withPath { uv_fs_stat(loopPointer, request, $0, Self.callback) }
            : withPath { uv_fs_lstat(loopPointer, request, $0, Self.callback) }
    }

    /// `startStatus` on `path`, given by the caller rather than read from the request's `path` (a
    /// batch's requests do not keep their paths: see
    /// `FileSystemRequests.start(_:path:client:tag:_:)`).
    func startStatus(of path: String, followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? path.withCString { uv_fs_stat(loopPointer, request, $0, Self.callback) }
            : path.withCString { uv_fs_lstat(loopPointer, request, $0, Self.callback) }
    }

    func startMakeDirectory(permissions: UInt32) -> Int32 {
        withPath { uv_fs_mkdir(loopPointer, request, $0, Int32(bitPattern: permissions), Self.callback) }
    }

    func startRemoveDirectory() -> Int32 { withPath { uv_fs_rmdir(loopPointer, request, $0, Self.callback) } }

    func startUnlink() -> Int32 { withPath { uv_fs_unlink(loopPointer, request, $0, Self.callback) } }

    /// Lists the directory at `path` in one request; read the entries with `scannedEntries`.
    func startScanDirectory() -> Int32 { withPath { uv_fs_scandir(loopPointer, request, $0, 0, Self.callback) } }

    /// `template` ends in `XXXXXX`; the path made is `resultPath`.
    func startMakeTemporaryDirectory(template: String) -> Int32 {
        template.withCString { uv_fs_mkdtemp(loopPointer, request, $0, Self.callback) }
    }

    func startRename(from: String, to: String) -> Int32 {
        from.withCString { from in to.withCString { uv_fs_rename(loopPointer, request, from, $0, Self.callback) } }
    }

    func startHardLink(existing: String, new: String) -> Int32 {
        existing.withCString { existing in new.withCString { uv_fs_link(loopPointer, request, existing, $0, Self.callback) } }
    }

    func startSymbolicLink(target: String, link: String) -> Int32 {
        target.withCString { target in link.withCString { uv_fs_symlink(loopPointer, request, target, $0, 0, Self.callback) } }
    }

    /// The link's target is `resultPath`.
    func startReadLink() -> Int32 { withPath { uv_fs_readlink(loopPointer, request, $0, Self.callback) } }

    /// The resolved path is `resultPath`.
    func startRealPath() -> Int32 { withPath { uv_fs_realpath(loopPointer, request, $0, Self.callback) } }

    /// `flags` are libuv's `UV_FS_COPYFILE_*`.
    func startCopyFile(from: String, to: String, flags: Int32) -> Int32 {
        from.withCString { from in to.withCString { uv_fs_copyfile(loopPointer, request, from, $0, flags, Self.callback) } }
    }

    func startChangeMode(_ permissions: UInt32) -> Int32 {
        withPath { uv_fs_chmod(loopPointer, request, $0, Int32(bitPattern: permissions), Self.callback) }
    }

    /// Times in seconds since the Unix epoch (libuv's doubles).
    func startSetTimes(accessed: Double, modified: Double, followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? withPath { uv_fs_utime(loopPointer, request, $0, accessed, modified, Self.callback) }
            : withPath { uv_fs_lutime(loopPointer, request, $0, accessed, modified, Self.callback) }
    }

    /// `UInt32.max` (-1 as `uid_t`/`gid_t`) leaves that ID as it is.
    func startChangeOwner(userID: UInt32, groupID: UInt32, followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? withPath { uv_fs_chown(loopPointer, request, $0, userID, groupID, Self.callback) }
            : withPath { uv_fs_lchown(loopPointer, request, $0, userID, groupID, Self.callback) }
    }

    /// `mode` is `F_OK` or a combination of `R_OK`, `W_OK`, `X_OK`.
    func startAccess(mode: Int32) -> Int32 { withPath { uv_fs_access(loopPointer, request, $0, mode, Self.callback) } }

    /// The entries of a finished `startScanDirectory`, in libuv's order (by name, bytewise),
    /// without `.` and `..`; `directory` is the path they are in.
    func scannedEntries(in directory: String) -> [DirectoryEntry] {
        var entries: [DirectoryEntry] = []
        entries.reserveCapacity(max(result, 0))
        var entry = uv_dirent_t()
        while uv_fs_scandir_next(request, &entry) == 0 {
            entries.append(DirectoryEntry(name: String(cString: entry.name), type: FileType(entry.type), directory: directory))
        }
        return entries
    }
}

extension FileType {
    /// The kind libuv reports in a directory entry.
    init(_ type: uv_dirent_type_t) {
        switch type {
        case UV_DIRENT_FILE: self = .regular
        case UV_DIRENT_DIR: self = .directory
        case UV_DIRENT_LINK: self = .symbolicLink
        case UV_DIRENT_FIFO: self = .fifo
        case UV_DIRENT_SOCKET: self = .socket
        case UV_DIRENT_CHAR: self = .characterDevice
        case UV_DIRENT_BLOCK: self = .blockDevice
        default: self = .unknown
        }
    }
}
