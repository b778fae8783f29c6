import CLibUV

#if canImport(Glibc)
import Glibc
#endif

extension StreamHandle {
    /// A new descriptor for the handle's socket, pipe or terminal (`F_DUPFD_CLOEXEC`, 3 or
    /// above), for `StreamConnection.takeDescriptor()`: it stays open when libuv closes the
    /// handle's own. Returns the descriptor, or a negative errno.
    func duplicateDescriptor() -> Int32 {
        var fd: uv_os_fd_t = -1
        let status = uv_fileno(handle.base, &fd)
        guard status == 0 else { return status }
        let duplicate = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        return duplicate >= 0 ? duplicate : -errno
    }
}
