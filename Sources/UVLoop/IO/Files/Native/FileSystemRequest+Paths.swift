import CLibUV

/// One thin starter per libuv call on a path. Each returns libuv's status: 0 when the request is
/// on its way (the callback follows), a negative error code when libuv refused it at once.
extension FileSystemRequest {
    func startStatus(followingSymlinks: Bool) -> Int32 {
        followingSymlinks
            ? uv_fs_stat(loopPointer, request, path, Self.callback)
            : uv_fs_lstat(loopPointer, request, path, Self.callback)
    }
}
