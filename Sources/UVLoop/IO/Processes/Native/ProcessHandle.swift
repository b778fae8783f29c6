import CLibUV
import Glibc
import Synchronization

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

/// One child process, spawned once, watched until it exits, closed once. Loop thread only.
///
/// Two ways to start and watch it, the same to its user:
/// - **posix_spawn and a pidfd** (the usual way): glibc's `posix_spawn` starts the child with
///   `clone(CLONE_VM|CLONE_VFORK)`, sharing the parent's memory until the child executes, and
///   returns once it has executed (or reports why it could not). A pidfd (`pidfd_open`, Linux
///   5.3) polled by a `uv_poll_t` becomes readable when the child ends; the loop then reaps it
///   (`waitpid` on its pid, which no one else reaps: libuv's `SIGCHLD` handler waits only for
///   its own children). Signals go through the pidfd (`pidfd_send_signal`).
/// - **uv_spawn** (the fallback): a kernel without pidfds, a child that switches user or group
///   (which `posix_spawn` cannot do), or a process whose `SIGCHLD` is ignored (the kernel reaps
///   children then, and only libuv's own `SIGCHLD` handler, which it installs, gets their status
///   back). libuv 1.44 forks (copying the parent's page tables), executes the program, reports a
///   failure to execute through a pipe before `uv_spawn` returns, and reaps the child from its
///   `SIGCHLD` handler.
///
/// Both set the child up alike: signal dispositions reset and no signal blocked, descriptors
/// 0, 1 and 2 blocking, the parent's other descriptors closed (every one UVLoop and libuv open
/// is closed on exec). One difference stays: for a bare program name, `uv_spawn` searches the
/// `PATH` of the child's environment and runs a file without a `#!` line through `/bin/sh`;
/// `posix_spawnp` searches the parent's `PATH` and reports such a file as `ENOEXEC`.
///
/// Closing the handle stops watching: the loop no longer reaps that child.
struct ProcessHandle: NativeIOHandle {
    /// The child's process id.
    let pid: Int32
    private let watch: Watch

    private enum Watch {
        case process(LibUVHandle<uv_process_t>)
        case pidfd(LibUVHandle<uv_poll_t>, descriptor: Int32)
    }

    /// When set, every child is spawned with `uv_spawn`: for tests of the fallback.
    static let spawnsWithLibUVOnly = Atomic<Bool>(false)

    /// Spawns `file` (searched in `PATH` when it has no slash) with `arguments`
    /// (the first is the child's `argv[0]`), `environment` (`NAME=value` strings; nil: the
    /// parent's), `workingDirectory` (nil: the parent's), `stdio` for descriptors 0, 1, 2, and
    /// `flags` (`UV_PROCESS_DETACHED`, `UV_PROCESS_SETUID`, `UV_PROCESS_SETGID`). `onExit` gets
    /// the exit status and the terminating signal (0 if none) on the loop's thread.
    static func spawn(
        loop: NativeLoop, file: String, arguments: [String], environment: [String]?, workingDirectory: String?,
        stdio: [ChildStdio], flags: UInt32, userID: UInt32, groupID: UInt32,
        onExit: @escaping (Int64, Int32) -> Void
    ) throws(LoopError) -> ProcessHandle {
        // C strings live until the spawn returns: the child has executed (or failed to) by then.
        let argv = CStringArray(arguments)
        let envp = environment.map(CStringArray.init)
        defer {
            argv.free()
            envp?.free()
        }
        let switchesIdentity = flags & UInt32(UV_PROCESS_SETUID.rawValue | UV_PROCESS_SETGID.rawValue) != 0
        if switchesIdentity || !pidfdsWork || spawnsWithLibUVOnly.load(ordering: .relaxed)
            || shim_children_reaped_by_kernel() != 0
        {
            return try spawnWithLibUV(
                loop: loop, file: file, argv: argv, envp: envp, workingDirectory: workingDirectory, stdio: stdio,
                flags: flags, userID: userID, groupID: groupID, onExit: onExit)
        }
        let detached = flags & UInt32(UV_PROCESS_DETACHED.rawValue) != 0
        let (pid, pidfd) = try spawnWithPidfd(
            file: file, argv: argv, envp: envp, workingDirectory: workingDirectory, stdio: stdio, newSession: detached)
        let poll: LibUVHandle<uv_poll_t>
        do {
            poll = try LibUVHandle.polling(
                pidfd, on: loop, drain: {},
                onReadable: { reaped(pid, onExit) }, closeDescriptor: { shim_close_fd(pidfd) })
        } catch {
            abandon(pid)
            throw error
        }
        return ProcessHandle(pid: pid, watch: .pidfd(poll, descriptor: pidfd))
    }

    /// The pidfd of `pid` is readable: reaps it and reports its end. A child that someone else
    /// reaped (a `waitpid(-1)` elsewhere in the process) is reported with exit status -1, its
    /// own being lost.
    private static func reaped(_ pid: Int32, _ onExit: (Int64, Int32) -> Void) {
        var status: Int32 = 0
        var signal: Int32 = 0
        switch shim_reap(pid, 0, &status, &signal) {
        case 1: onExit(Int64(status), signal)
        case 0: return    // not ended after all: wait for the next readiness
        default: onExit(-1, 0)
        }
    }

    private static func spawnWithLibUV(
        loop: NativeLoop, file: String, argv: CStringArray, envp: CStringArray?, workingDirectory: String?,
        stdio: [ChildStdio], flags: UInt32, userID: UInt32, groupID: UInt32,
        onExit: @escaping (Int64, Int32) -> Void
    ) throws(LoopError) -> ProcessHandle {
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
        return ProcessHandle(pid: handle.pointer.pointee.pid, watch: .process(handle))
    }

    /// Whether the child is watched through a pidfd (not by `uv_spawn`'s handle).
    var isWatchedByPidfd: Bool {
        if case .pidfd = watch { return true }
        return false
    }

    /// Sends `signal` to the child; returns 0, or a negative error code (`UV_ESRCH` once it has
    /// exited).
    func kill(_ signal: Int32) -> Int32 {
        switch watch {
        case .process(let handle): uv_process_kill(handle.pointer, signal)
        case .pidfd(_, let descriptor): shim_pidfd_send_signal(descriptor, signal)
        }
    }

    /// Stops watching the child and closes the handle; the loop no longer reaps it.
    func close() {
        switch watch {
        case .process(let handle): handle.close()
        case .pidfd(let handle, _): handle.close()
        }
    }

    func unref() {
        switch watch {
        case .process(let handle): handle.unref()
        case .pidfd(let handle, _): handle.unref()
        }
    }

    /// Waits for a child that the loop no longer watches to end, and reaps it (`waitpid`). For a
    /// child just killed with `SIGKILL`, which ends at once. Returns false when it was reaped
    /// already.
    static func reap(_ pid: Int32) -> Bool {
        var status: Int32 = 0
        var signal: Int32 = 0
        return shim_reap(pid, 1, &status, &signal) == 1
    }

    /// Kills and reaps a child whose watch could not be set up.
    static func abandon(_ pid: Int32) {
        _ = Glibc.kill(pid, SIGKILL)
        _ = reap(pid)
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
func withOptionalCString<Result>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
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
