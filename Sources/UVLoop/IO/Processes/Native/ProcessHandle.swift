import CLibUV
import Glibc

/// How one of a child's standard descriptors is set up: one `uv_stdio_container_t`.
enum ChildStdio {
    /// The child gets this descriptor of the parent (`UV_INHERIT_FD`).
    case descriptor(Int32)
    /// The child gets `/dev/null` (`UV_IGNORE`).
    case ignore
    /// A new pipe (`UV_CREATE_PIPE`) between the child and `stream`, an unconnected `uv_pipe_t`
    /// of the parent's; `childReads`: the child reads from it (standard input).
    case pipe(StreamHandle, childReads: Bool)
}

/// A `uv_process_t`: one child process, spawned once, watched until it exits, closed once.
/// Loop thread only.
///
/// `uv_spawn` forks and executes the program before it returns (libuv 1.44 waits for the `exec`
/// through a pipe, so a program that cannot be executed is reported by the call itself), and
/// libuv reaps the child from its own `SIGCHLD` handler, calling the exit callback on the loop's
/// thread. Closing the handle stops watching: libuv no longer reaps that child.
struct ProcessHandle: NativeIOHandle {
    let handle: LibUVHandle<uv_process_t>

    /// Spawns `file` (searched in `PATH` when it has no slash, as `execvp` does) with `arguments`
    /// (the first is the child's `argv[0]`), `environment` (`NAME=value` strings; nil: the
    /// parent's), `workingDirectory` (nil: the parent's), `stdio` for descriptors 0, 1, 2, and
    /// `flags` (`UV_PROCESS_DETACHED`, `UV_PROCESS_SETUID`, `UV_PROCESS_SETGID`). `onExit` gets
    /// the exit status and the terminating signal (0 if none) on the loop's thread.
    static func spawn(
        loop: NativeLoop, file: String, arguments: [String], environment: [String]?, workingDirectory: String?,
        stdio: [ChildStdio], flags: UInt32, userID: UInt32, groupID: UInt32,
        onExit: @escaping (Int64, Int32) -> Void
    ) throws(LoopError) -> ProcessHandle {
        // C strings live until uv_spawn returns: the child has executed (or failed to) by then.
        let argv = CStringArray(arguments)
        let envp = environment.map(CStringArray.init)
        defer {
            argv.free()
            envp?.free()
        }
        var containers = stdio.map(\.container)
        let context = ProcessHandleContext(onExit: onExit)
        let handle = try LibUVHandle<uv_process_t>(
            "uv_spawn", closesOnFailure: true,
            initialize: { process in
                file.withCString { file in
                    withOptionalCString(workingDirectory) { cwd in
                        containers.withUnsafeMutableBufferPointer { containers in
                            var options = uv_process_options_t()
                            options.exit_cb = { process, status, signal in
                                guard let process else { return }
                                let context = LibUVHandle<uv_process_t>.context(of: process, as: ProcessHandleContext.self)
                                context.onExit?(status, signal)
                            }
                            options.file = file
                            options.args = argv.pointer
                            options.env = envp?.pointer
                            options.cwd = cwd
                            options.flags = flags
                            options.stdio_count = Int32(containers.count)
                            options.stdio = containers.baseAddress
                            options.uid = userID
                            options.gid = groupID
                            return uv_spawn(loop.pointer, process, &options)
                        }
                    }
                }
            },
            context: context)
        return ProcessHandle(handle: handle)
    }

    /// The child's process id.
    var pid: Int32 { handle.pointer.pointee.pid }

    /// Sends `signal` to the child (`uv_process_kill`); returns libuv's status (`UV_ESRCH` once it
    /// has exited).
    func kill(_ signal: Int32) -> Int32 { uv_process_kill(handle.pointer, signal) }

    /// Stops watching the child and closes the handle; libuv no longer reaps it.
    func close() { handle.close() }

    func unref() { handle.unref() }

    /// Waits for a child that libuv no longer watches to end, and reaps it (`waitpid`). For a
    /// child just killed with `SIGKILL`, which ends at once. Returns false when it was reaped
    /// already.
    static func reap(_ pid: Int32) -> Bool {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, 0)
            if result == pid { return true }
            if result == -1 && errno == EINTR { continue }
            return false
        }
    }
}

/// What a process handle's `data` field carries: the exit callback.
final class ProcessHandleContext: HandleContext {
    var onExit: ((Int64, Int32) -> Void)?

    init(onExit: @escaping (Int64, Int32) -> Void) {
        self.onExit = onExit
    }

    override func handleDidClose() { onExit = nil }
}

extension ChildStdio {
    var container: uv_stdio_container_t {
        var container = uv_stdio_container_t()
        switch self {
        case .descriptor(let fd):
            container.flags = UV_INHERIT_FD
            container.data.fd = fd
        case .ignore:
            container.flags = UV_IGNORE
        case .pipe(let stream, let childReads):
            container.flags = uv_stdio_flags(
                UV_CREATE_PIPE.rawValue | (childReads ? UV_READABLE_PIPE.rawValue : UV_WRITABLE_PIPE.rawValue))
            container.data.stream = stream.pointer
        }
        return container
    }
}

/// A NULL-terminated array of C strings, as `argv` and `envp` are; `free()` releases it.
struct CStringArray {
    let pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

    init(_ strings: [String]) {
        pointer = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointer[index] = strdup(string) }
        pointer[strings.count] = nil
    }

    func free() {
        var index = 0
        while let string = pointer[index] {
            Glibc.free(string)
            index += 1
        }
        pointer.deallocate()
    }
}

/// Calls `body` with `string` as a C string, or with nil.
private func withOptionalCString<Result>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

/// The parent's environment, read from the C library's `environ`.
enum ProcessEnvironment {
    /// The variables as they are now. The C library's `environ` is not thread-safe against
    /// `setenv`: like every reader of it, this assumes nobody changes the environment meanwhile.
    static func current() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }
}
