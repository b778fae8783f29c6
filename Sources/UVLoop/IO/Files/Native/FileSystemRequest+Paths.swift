import CLibUV

/// One thin starter per libuv call on a path. Each returns libuv's status: 0 when the request is
/// on its way (the callback follows), a negative error code when libuv refused it at once.
/// Starters on one path use the request's `path`; those on two take both, since the request's
/// `path` then holds the pair as its errors name it.
extension FileSystemRequest {
    func startStatus(followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? uv_fs_stat(loopPointer, request, path, Self.callback)
            : uv_fs_lstat(loopPointer, request, path, Self.callback)
    }

    func startMakeDirectory(permissions: UInt32) -> Int32 {
        uv_fs_mkdir(loopPointer, request, path, Int32(bitPattern: permissions), Self.callback)
    }

    func startRemoveDirectory() -> Int32 { uv_fs_rmdir(loopPointer, request, path, Self.callback) }

    func startUnlink() -> Int32 { uv_fs_unlink(loopPointer, request, path, Self.callback) }

    /// Lists the directory at `path` in one request; read the entries with `scannedEntries`.
    func startScanDirectory() -> Int32 { uv_fs_scandir(loopPointer, request, path, 0, Self.callback) }

    /// `template` ends in `XXXXXX`; the path made is `resultPath`.
    func startMakeTemporaryDirectory(template: String) -> Int32 {
        uv_fs_mkdtemp(loopPointer, request, template, Self.callback)
    }

    func startRename(from: String, to: String) -> Int32 {
        uv_fs_rename(loopPointer, request, from, to, Self.callback)
    }

    func startHardLink(existing: String, new: String) -> Int32 {
        uv_fs_link(loopPointer, request, existing, new, Self.callback)
    }

    func startSymbolicLink(target: String, link: String) -> Int32 {
        uv_fs_symlink(loopPointer, request, target, link, 0, Self.callback)
    }

    /// The link's target is `resultPath`.
    func startReadLink() -> Int32 { uv_fs_readlink(loopPointer, request, path, Self.callback) }

    /// The resolved path is `resultPath`.
    func startRealPath() -> Int32 { uv_fs_realpath(loopPointer, request, path, Self.callback) }

    /// `flags` are libuv's `UV_FS_COPYFILE_*`.
    func startCopyFile(from: String, to: String, flags: Int32) -> Int32 {
        uv_fs_copyfile(loopPointer, request, from, to, flags, Self.callback)
    }

    func startChangeMode(_ permissions: UInt32) -> Int32 {
        uv_fs_chmod(loopPointer, request, path, Int32(bitPattern: permissions), Self.callback)
    }

    /// Times in seconds since the Unix epoch (libuv's doubles).
    func startSetTimes(accessed: Double, modified: Double, followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? uv_fs_utime(loopPointer, request, path, accessed, modified, Self.callback)
            : uv_fs_lutime(loopPointer, request, path, accessed, modified, Self.callback)
    }

    /// `UInt32.max` (-1 as `uid_t`/`gid_t`) leaves that ID as it is.
    func startChangeOwner(userID: UInt32, groupID: UInt32, followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? uv_fs_chown(loopPointer, request, path, userID, groupID, Self.callback)
            : uv_fs_lchown(loopPointer, request, path, userID, groupID, Self.callback)
    }

    /// `mode` is `F_OK` or a combination of `R_OK`, `W_OK`, `X_OK`.
    func startAccess(mode: Int32) -> Int32 { uv_fs_access(loopPointer, request, path, mode, Self.callback) }

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
