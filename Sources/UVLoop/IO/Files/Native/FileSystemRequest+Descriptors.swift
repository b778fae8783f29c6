import CLibUV

/// One thin starter per libuv call on an open file's descriptor (and `open`, which makes one).
/// Each returns libuv's status: 0 when the request is on its way (the callback follows), a
/// negative error code when libuv refused it at once.
extension FileSystemRequest {
    func startOpen(flags: Int32, mode: Int32) -> Int32 {
        uv_fs_open(loopPointer, request, path, flags, mode, Self.callback)
    }

    /// Reads up to `count` bytes into `base`; offset -1 reads at the file's position (`read`),
    /// otherwise at `offset` (`pread`). libuv copies the one `uv_buf_t` into the request.
    func startRead(descriptor: Int32, into base: UnsafeMutableRawPointer, count: Int, offset: Int64) -> Int32 {
        var buffer = uv_buf_init(base.assumingMemoryBound(to: CChar.self), UInt32(count))
        return uv_fs_read(loopPointer, request, descriptor, &buffer, 1, offset, Self.callback)
    }

    /// Writes `count` bytes from `base`; offset -1 writes at the file's position (`write`).
    func startWrite(descriptor: Int32, from base: UnsafeMutableRawPointer, count: Int, offset: Int64) -> Int32 {
        var buffer = uv_buf_init(base.assumingMemoryBound(to: CChar.self), UInt32(count))
        return uv_fs_write(loopPointer, request, descriptor, &buffer, 1, offset, Self.callback)
    }

    func startSync(descriptor: Int32, dataOnly: Bool) -> Int32 {
        dataOnly
            ? uv_fs_fdatasync(loopPointer, request, descriptor, Self.callback)
            : uv_fs_fsync(loopPointer, request, descriptor, Self.callback)
    }

    func startTruncate(descriptor: Int32, length: Int64) -> Int32 {
        uv_fs_ftruncate(loopPointer, request, descriptor, length, Self.callback)
    }

    func startFileStatus(descriptor: Int32) -> Int32 {
        uv_fs_fstat(loopPointer, request, descriptor, Self.callback)
    }

    func startClose(descriptor: Int32) -> Int32 {
        uv_fs_close(loopPointer, request, descriptor, Self.callback)
    }

    /// Whether libuv withdrew the request before a pool thread ran it (`uv_cancel`): its system
    /// call never ran.
    var wasWithdrawn: Bool { result == Int(UV_ECANCELED.rawValue) }
}

extension FileSystemRequest {
    /// Whether the request is a descriptor's close.
    var isClose: Bool { request.pointee.fs_type == UV_FS_CLOSE }
}

extension FileSystemRequest {
    /// Closes `descriptor` at once on the loop's thread: an open that finished after the loop's
    /// ending withdrew it.
    func closeDescriptorNow(_ descriptor: Int32) {
        var close = uv_fs_t()
        _ = uv_fs_close(loopPointer, &close, descriptor, nil)
        uv_fs_req_cleanup(&close)
    }
}

/// The path calls that an atomic write needs (`LoopFileSystem.writeFile`): named for that use, so
/// that they stay apart from the general path starters.
extension FileSystemRequest {
    /// Renames the request's path (the temporary file) to `target`, replacing it.
    func startAtomicWriteRename(to target: String) -> Int32 {
        uv_fs_rename(loopPointer, request, path, target, Self.callback)
    }

    /// Removes the request's path (a temporary file left by a failed write).
    func startAtomicWriteUnlink() -> Int32 {
        uv_fs_unlink(loopPointer, request, path, Self.callback)
    }
}
