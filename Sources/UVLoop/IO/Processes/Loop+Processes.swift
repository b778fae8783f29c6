extension Loop {
    /// Starts a child process running `command`. Loop thread only.
    ///
    /// The loop reaps the child when it exits and calls `onExit` on its thread with how it ended;
    /// a child still running when the loop shuts down or is detached is killed and reaped then
    /// (unless ``Command/detached``). Pipes (``Command/StandardIO/pipe``) are the child process's
    /// ``ChildProcess/standardInput``, ``ChildProcess/standardOutput`` and
    /// ``ChildProcess/standardError``, ordinary streams that start closed to reading: call
    /// ``StreamConnection/startReading(_:)`` or iterate ``StreamConnection/reads``.
    ///
    /// From async code use ``spawn(_:)``.
    /// - Parameters:
    ///   - command: what to run, and how.
    ///   - onExit: called once, on the loop's thread, when the child has ended.
    /// - Returns: the running child.
    /// - Throws: ``LoopError/libuv(function:code:)`` naming the program and the reason when it
    ///   cannot be started (no such file, not executable, ...); ``LoopError/invalidArgument(_:)``
    ///   for a malformed command; ``LoopError/shutDown`` (``LoopError/detached``) when the loop no
    ///   longer accepts work.
    @available(*, noasync, message: "from async code use 'try await loop.spawn(command)'")
    public func spawn(_ command: Command, onExit: ((ProcessTermination) -> Void)? = nil) throws(LoopError) -> ChildProcess {
        preconditionOnLoopThread("Loop.spawn(_:onExit:)")
        return try startChild(command, onExit: onExit)
    }

    /// Starts a child process running `command`; see ``spawn(_:onExit:)``. Callable from any task.
    /// - Parameter command: what to run, and how.
    /// - Returns: the running child; wait for its end with ``ChildProcess/exit()``.
    /// - Throws: like ``spawn(_:onExit:)``.
    public func spawn(_ command: Command) async throws(LoopError) -> ChildProcess {
        try await suspendOnLoopThread { _, continuation in
            continuation.resume(with: Result { () throws(LoopError) in try self.startChild(command, onExit: nil) })
        } cancel: { _ in }
    }

    /// Runs `command` to its end and collects what it writes to its standard output and error:
    /// the common case in one call. Callable from any task.
    ///
    /// The command's standard output and error become pipes whatever it says; its standard input
    /// is what it says (nothing by default).
    /// - Parameters:
    ///   - command: what to run.
    ///   - outputLimit: the most bytes collected from the output and the error together; a child
    ///     that writes more is killed.
    ///   - timeout: how long the child may run, on the loop's clock; nil for no limit. A child
    ///     still running then is killed.
    /// - Returns: how the child ended, and its output and error output.
    /// - Throws: like ``spawn(_:onExit:)``; ``LoopError/outputLimitExceeded(limit:)``;
    ///   ``LoopError/timedOut``; ``LoopError/cancelled`` when the task is cancelled (the child is
    ///   terminated, ``ChildProcess/terminate(grace:)``).
    public func run(
        _ command: Command, outputLimit: Int = 1 << 20, timeout: Duration? = nil
    ) async throws(LoopError) -> CommandOutput {
        guard outputLimit >= 0 else { throw .invalidArgument("outputLimit must be 0 or more (got \(outputLimit))") }
        var piped = command
        piped.standardOutput = .pipe
        piped.standardError = .pipe
        let collector = LoopConfined<CommandCollector?>(nil)
        let command = piped
        return try await suspendOnLoopThread { _, continuation in
            do throws(LoopError) {
                let child = try self.startChild(command, onExit: nil)
                collector.value = try CommandCollector(
                    child: child, limit: outputLimit, timeout: timeout, continuation: continuation)
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in
            collector.value?.finish(.failure(.cancelled))
        }
    }

    /// Spawns `command` with its pipes. Loop thread only.
    func startChild(_ command: Command, onExit: ((ProcessTermination) -> Void)?) throws(LoopError) -> ChildProcess {
        try command.validate()
        var pipes: [StreamConnectionCore?] = [nil, nil, nil]
        var stdio: [ChildStdio] = []
        do throws(LoopError) {
            for (index, io) in [command.standardInput, command.standardOutput, command.standardError].enumerated() {
                switch io {
                case .inherit: stdio.append(.descriptor(Int32(index)))
                case .ignore: stdio.append(.ignore)
                case .descriptor(let fd): stdio.append(.descriptor(fd))
                case .pipe:
                    let pipe = try StreamConnectionCore(loop: self, kind: .pipe)
                    pipes[index] = pipe
                    stdio.append(.pipe(pipe.handle, childReads: index == 0))
                }
            }
            let core = try ChildProcessCore(loop: self, command: command, stdio: stdio, onExit: onExit)
            return ChildProcess(core: core, stdio: pipes.map { $0.map { StreamConnection(core: $0) } })
        } catch {
            for pipe in pipes { pipe?.close(reason: .streamClosed) }
            throw error
        }
    }
}

/// What ``Loop/run(_:outputLimit:timeout:)`` returns: how the child ended, and what it wrote.
public struct CommandOutput: Sendable, Equatable {
    /// How the child ended.
    public let termination: ProcessTermination
    /// What it wrote to its standard output.
    public let standardOutput: [UInt8]
    /// What it wrote to its standard error.
    public let standardError: [UInt8]

    /// The standard output as UTF-8 text (invalid bytes replaced).
    public var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
    /// The standard error as UTF-8 text (invalid bytes replaced).
    public var errorText: String { String(decoding: standardError, as: UTF8.self) }
}

/// Collects a child's output until it has ended and both pipes have reached their end, within a
/// byte limit and a deadline. Loop thread only.
final class CommandCollector {
    private let child: ChildProcess
    private let limit: Int
    private var output: [UInt8] = []
    private var error: [UInt8] = []
    private var openPipes = 2
    private var termination: ProcessTermination?
    private var timer: LoopTimer?
    private var continuation: LoopContinuation<CommandOutput>?

    init(
        child: ChildProcess, limit: Int, timeout: Duration?, continuation: LoopContinuation<CommandOutput>
    ) throws(LoopError) {
        self.child = child
        self.limit = limit
        self.continuation = continuation
        child.core.value.onExit { [self] termination in
            self.termination = termination
            finishIfDone()
        }
        try child.standardOutput?.startReading { [self] _, read in collect(read, into: \.output) }
        try child.standardError?.startReading { [self] _, read in collect(read, into: \.error) }
        if let timeout {
            let confined = LoopConfined(self)
            timer = try child.loop.schedule(after: timeout) { confined.value.finish(.failure(.timedOut)) }
        }
    }

    private func collect(_ read: StreamRead, into buffer: ReferenceWritableKeyPath<CommandCollector, [UInt8]>) {
        switch read {
        case .bytes(let bytes):
            guard output.count + error.count + bytes.count <= limit else {
                return finish(.failure(.outputLimitExceeded(limit: limit)))
            }
            self[keyPath: buffer].append(contentsOf: bytes)
        case .end, .failed:
            openPipes -= 1
            finishIfDone()
        }
    }

    private func finishIfDone() {
        guard openPipes == 0, let termination else { return }
        finish(.success(CommandOutput(termination: termination, standardOutput: output, standardError: error)))
    }

    /// Ends the collection once: the result goes to the waiting task; on a failure, a child still
    /// running is ended (killed at once, or given its grace when the task was cancelled).
    func finish(_ result: Result<CommandOutput, LoopError>) {
        guard let continuation else { return }
        self.continuation = nil
        timer?.cancel()
        timer = nil
        if case .failure(let failure) = result, child.isRunning {
            if failure == .cancelled { child.terminate() } else { child.kill(.kill) }
        }
        child.standardOutput?.close()
        child.standardError?.close()
        continuation.resume(with: result)
    }
}
