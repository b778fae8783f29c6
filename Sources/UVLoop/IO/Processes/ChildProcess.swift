import CLibUV
import Glibc

/// A child process started by ``Loop/spawn(_:onExit:)``: its process id, the parent's ends of its
/// pipes, how it ended, and the verbs to signal it and wait for it.
///
/// ```swift
/// var command = Command("/bin/echo", arguments: ["hello"])
/// command.standardOutput = .pipe
/// let child = try loop.spawn(command) { termination in print(termination) }
/// try child.standardOutput?.startReading { _, read in
///     if case .bytes(let bytes) = read { received.value += bytes }   // the child's output
/// }
/// ```
///
/// ## Its end
/// The loop reaps the child when it exits (no zombie is left) and reports how it ended: to the
/// `onExit` handler, to tasks waiting in ``exit()``, and in ``termination``. A child still running
/// when the loop shuts down or is detached is killed (`SIGKILL`) and reaped then, unless its
/// command was ``Command/detached``: a detached child is left running.
///
/// ## Threads
/// The object is usable from any thread. The exit handler runs on the loop's thread. The pipes
/// are ordinary ``StreamConnection``s, loop thread only like any.
public final class ChildProcess: Sendable {
    /// The loop that watches the child.
    public let loop: Loop
    /// The child's process id.
    public let pid: Int32
    /// The parent's end of the child's standard input, when it is a pipe: write to it, and close
    /// it (or shut its writes down) to give the child end of file.
    public let standardInput: StreamConnection?
    /// The parent's end of the child's standard output, when it is a pipe: read from it.
    public let standardOutput: StreamConnection?
    /// The parent's end of the child's standard error, when it is a pipe: read from it.
    public let standardError: StreamConnection?

    let core: LoopConfinedObject<ChildProcessCore>
    let status: ProcessStatus

    init(core: ChildProcessCore, stdio: [StreamConnection?]) {
        loop = core.loop
        pid = core.pid
        standardInput = stdio[0]
        standardOutput = stdio[1]
        standardError = stdio[2]
        status = core.status
        self.core = LoopConfinedObject(core)
    }

    /// How the child ended, or nil while it runs. Callable from any thread.
    public var termination: ProcessTermination? { status.termination }

    /// Whether the child is still running (not yet reaped). Callable from any thread.
    public var isRunning: Bool { status.termination == nil }

    /// Sends `signal` to the child. Callable from any thread: on the loop's thread it is sent
    /// before this returns, from another it travels to the loop like a post.
    /// - Parameter signal: the signal; `SIGTERM` by default.
    /// - Returns: `false` if the child had already exited (nothing was sent); otherwise `true`.
    @discardableResult
    public func kill(_ signal: Signal = .terminate) -> Bool {
        guard isRunning else { return false }
        let core = core
        return loop.onLoopThread { core.value.send(signal.number) } == nil
    }

    /// Asks the child to end: `SIGTERM` now, and `SIGKILL` if it is still running after `grace`
    /// on the loop's clock. Callable from any thread.
    /// - Parameter grace: how long the child gets to end by itself.
    /// - Returns: `false` if the child had already exited; otherwise `true`.
    @discardableResult
    public func terminate(grace: Duration = ChildProcess.defaultGrace) -> Bool {
        guard isRunning else { return false }
        let core = core
        return loop.onLoopThread { core.value.terminate(grace: grace) } == nil
    }

    /// Waits until the child has ended and returns how. Callable from any task.
    ///
    /// Cancelling the waiting task terminates the child (``terminate(grace:)`` with
    /// ``defaultGrace``) and throws ``LoopError/cancelled`` at once, without waiting for it.
    /// - Returns: how the child ended.
    /// - Throws: ``LoopError/cancelled`` when the task is cancelled; ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) when the loop ends first (which kills the child).
    public func exit() async throws(LoopError) -> ProcessTermination {
        if let termination { return termination }
        let core = core
        return try await loop.suspendOnLoopThread { waiter, continuation in
            core.value.waitForExit(waiter, continuation)
        } cancel: { waiter in
            core.value.cancelWait(waiter)
        }
    }

    /// How long ``terminate(grace:)`` waits between `SIGTERM` and `SIGKILL` unless told otherwise,
    /// and what a cancelled ``exit()`` gives the child: 5 seconds.
    public static let defaultGrace: Duration = .seconds(5)
}

/// How a child ended, readable from any thread; written once by the loop's thread.
final class ProcessStatus: Sendable {
    private let value = NativeMutex<ProcessTermination?>(nil)

    var termination: ProcessTermination? { value.withLock { $0 } }

    func set(_ termination: ProcessTermination) { value.withLock { $0 = termination } }
}

/// The loop-thread side of a ``ChildProcess``: its process handle, its exit handler and the tasks
/// waiting for its end. Loop thread only.
final class ChildProcessCore: IOHandleCore<ProcessHandle> {
    private(set) var pid: Int32 = 0
    let status = ProcessStatus()
    private let detached: Bool
    private var exitHandlers: [(ProcessTermination) -> Void] = []
    private var waiters: [(waiter: StreamWaiter, continuation: LoopContinuation<ProcessTermination>)] = []
    private var graceTimer: LoopTimer?

    /// Spawns `command` with `stdio` for descriptors 0, 1 and 2.
    init(
        loop: Loop, command: Command, stdio: [ChildStdio], onExit: ((ProcessTermination) -> Void)?
    ) throws(LoopError) {
        detached = command.detached
        if let onExit { exitHandlers.append(onExit) }
        try super.init(loop: loop)
        var flags: UInt32 = 0
        if command.detached { flags |= UInt32(UV_PROCESS_DETACHED.rawValue) }
        if command.userID != nil { flags |= UInt32(UV_PROCESS_SETUID.rawValue) }
        if command.groupID != nil { flags |= UInt32(UV_PROCESS_SETGID.rawValue) }
        let spawned: ProcessHandle
        do {
            spawned = try ProcessHandle.spawn(
                loop: loop.native, file: command.executable, arguments: [command.executable] + command.arguments,
                environment: command.environmentStrings(), workingDirectory: command.workingDirectory,
                stdio: stdio, flags: flags, userID: command.userID ?? 0, groupID: command.groupID ?? 0,
                onExit: { [unowned self] status, signal in asLoopCallback { exited(status: status, signal: signal) } })
        } catch {
            throw Self.spawnError(error, command)
        }
        pid = spawned.pid
        // A running child keeps the loop alive, as the owner's own children do; a detached one
        // does not.
        open(spawned, keepsOwnerLoopAlive: !detached)
        if detached { spawned.unref() }
    }

    /// The spawn's error, naming the program and the reason.
    private static func spawnError(_ error: LoopError, _ command: Command) -> LoopError {
        guard case .libuv(let function, let code) = error else { return error }
        let reason = switch code {
        case UV_ENOENT.rawValue: "no such file (check the path, or PATH for a bare name)"
        case UV_EACCES.rawValue: "permission denied (is it executable, and are its directories searchable?)"
        case -ENOEXEC: "not an executable format"
        case UV_EPERM.rawValue: "not permitted (switching user or group needs the privilege to)"
        default: "\(String(cString: uv_strerror(code)))"
        }
        return .libuv(function: "\(function) (\(command.executable): \(reason))", code: code)
    }

    /// Adds a handler for the child's end (after the one given to `spawn`).
    func onExit(_ handler: @escaping (ProcessTermination) -> Void) {
        exitHandlers.append(handler)
    }

    /// Sends `signal` unless the child has exited.
    func send(_ signal: Int32) {
        guard isOpen, status.termination == nil else { return }
        _ = handle.kill(signal)
    }

    /// `SIGTERM` now, `SIGKILL` after `grace` unless the child has exited by then.
    func terminate(grace: Duration) {
        guard isOpen, status.termination == nil else { return }
        _ = handle.kill(SIGTERM)
        guard graceTimer == nil else { return }
        let kill: @Sendable () -> Void = { [confined = LoopConfined(self)] in confined.value.send(SIGKILL) }
        graceTimer = try? loop.schedule(after: grace, kill)
    }

    /// The async face's wait for the child's end.
    func waitForExit(_ waiter: StreamWaiter, _ continuation: LoopContinuation<ProcessTermination>) {
        if let termination = status.termination { return continuation.resume(returning: termination) }
        if let reason = closeReason { return continuation.resume(throwing: reason) }
        if waiter.isCancelled { return cancelWait(waiter, continuation) }
        waiters.append((waiter, continuation))
    }

    func cancelWait(_ waiter: StreamWaiter) {
        guard let index = waiters.firstIndex(where: { $0.waiter === waiter }) else { return }
        cancelWait(waiter, waiters.remove(at: index).continuation)
    }

    private func cancelWait(_ waiter: StreamWaiter, _ continuation: LoopContinuation<ProcessTermination>) {
        terminate(grace: ChildProcess.defaultGrace)
        continuation.resume(throwing: .cancelled)
    }

    /// The child has ended and was reaped.
    private func exited(status exitStatus: Int64, signal: Int32) {
        let termination: ProcessTermination = signal != 0 ? .signalled(Signal(signal)) : .exited(Int32(truncatingIfNeeded: exitStatus))
        status.set(termination)
        graceTimer?.cancel()
        graceTimer = nil
        let handlers = exitHandlers
        let waiting = waiters
        exitHandlers.removeAll()
        waiters.removeAll()
        close(reason: .streamClosed)
        for handler in handlers { handler(termination) }
        for entry in waiting { entry.continuation.resume(returning: termination) }
    }

    /// The loop ends while the child runs: kill it and reap it here, since the handle stops watching
    /// it with the close (a detached child is left running).
    override func closeNative(_ native: ProcessHandle) {
        let killing = status.termination == nil && !detached
        if killing { _ = native.kill(SIGKILL) }
        native.close()
        if killing, ProcessHandle.reap(pid) { status.set(.signalled(Signal(SIGKILL))) }
    }

    override func didClose(reason: LoopError) {
        graceTimer?.cancel()
        graceTimer = nil
        exitHandlers.removeAll()
        let waiting = waiters
        waiters.removeAll()
        for entry in waiting { entry.continuation.resume(throwing: reason) }
    }
}
