import CLibUV
import Glibc

extension ProcessHandle {
    /// Whether this kernel has pidfds (`pidfd_open`, Linux 5.3): asked once, by opening one for
    /// this process.
    static let pidfdsWork: Bool = {
        let descriptor = shim_pidfd_open(getpid())
        guard descriptor >= 0 else { return false }
        shim_close_fd(descriptor)
        return true
    }()

    /// Starts the child with `posix_spawn` and opens its pidfd; the parent's ends of its pipes are
    /// opened on their streams. Returns the child's pid and pidfd.
    static func spawnWithPidfd(
        file: String, argv: CStringArray, envp: CStringArray?, workingDirectory: String?, stdio: [ChildStdio],
        newSession: Bool
    ) throws(LoopError) -> (pid: Int32, pidfd: Int32) {
        var slots: [Int32] = stdio.map { io in
            switch io {
            case .descriptor(let fd): fd
            case .ignore: SHIM_STDIO_IGNORE
            case .pipe: SHIM_STDIO_PIPE
            }
        }
        var parentEnds: [Int32] = [-1, -1, -1]
        var pid: pid_t = 0
        let error = file.withCString { file in
            withOptionalCString(workingDirectory) { cwd in
                shim_spawn(&pid, file, argv.pointer, envp?.pointer, cwd, &slots, &parentEnds, newSession ? 1 : 0)
            }
        }
        guard error == 0 else { throw .libuv(-error, "posix_spawn") }
        // From here on the child runs: a failure kills and reaps it before reporting.
        for (index, io) in stdio.enumerated() {
            guard case .pipe(let stream, _) = io else { continue }
            let pipe = UnsafeMutableRawPointer(stream.pointer).assumingMemoryBound(to: uv_pipe_t.self)
            let status = uv_pipe_open(pipe, parentEnds[index])
            guard status == 0 else {
                for end in parentEnds[index...] where end >= 0 { shim_close_fd(end) }
                abandon(pid)
                throw .libuv(status, "uv_pipe_open")
            }
        }
        let pidfd = shim_pidfd_open(pid)
        guard pidfd >= 0 else {
            abandon(pid)
            throw .libuv(pidfd, "pidfd_open")
        }
        return (pid, pidfd)
    }
}
