/// What to run as a child process, and how: the program, its arguments and environment, its
/// working directory, and what its standard input, output and error are. Pass it to
/// ``Loop/spawn(_:onExit:)`` or ``Loop/run(_:outputLimit:timeout:)``.
///
/// ```swift
/// var command = Command("/bin/sh", arguments: ["-c", "echo $GREETING"])
/// command.environment = .extending(["GREETING": "hello"])
/// command.standardOutput = .pipe
/// ```
public struct Command: Sendable {
    /// Where the child's environment comes from.
    public enum Environment: Sendable, Equatable {
        /// The parent's environment, as it is when the child starts.
        case inherit
        /// Exactly these variables, and no others.
        case replacing([String: String])
        /// The parent's environment with these variables added or replaced.
        case extending([String: String])
    }

    /// What one of the child's standard descriptors is.
    public enum StandardIO: Sendable, Equatable {
        /// The parent's own descriptor of the same number (its terminal, its log file, ...).
        case inherit
        /// `/dev/null`: reads end at once, writes are discarded.
        case ignore
        /// A descriptor of the parent's (a socket, a file, a pipe end), which the child gets as
        /// this descriptor. The parent keeps its own and closes it when it wants to.
        case descriptor(Int32)
        /// A new pipe, whose parent end is a ``StreamConnection`` of the ``ChildProcess``
        /// (``ChildProcess/standardInput`` to write to the child, ``ChildProcess/standardOutput``
        /// and ``ChildProcess/standardError`` to read from it), with the streams' backpressure.
        case pipe
    }

    /// The program: a path, or a name looked up in the `PATH` of the parent's environment. It
    /// must be an executable file or a script that starts with a `#!` line.
    public var executable: String
    /// The arguments after the program's name.
    public var arguments: [String]
    /// The child's environment; the parent's by default.
    public var environment: Environment = .inherit
    /// The child's working directory; the parent's when nil.
    public var workingDirectory: String?
    /// The child's standard input; ``StandardIO/ignore`` by default, so that a child never
    /// competes with the parent for its input.
    public var standardInput: StandardIO = .ignore
    /// The child's standard output; the parent's by default.
    public var standardOutput: StandardIO = .inherit
    /// The child's standard error; the parent's by default.
    public var standardError: StandardIO = .inherit
    /// The user id the child runs as (`setuid`); the parent's when nil. Needs the privilege to
    /// switch users.
    public var userID: UInt32?
    /// The group id the child runs as (`setgid`); the parent's when nil.
    public var groupID: UInt32?
    /// Whether the child runs in a session of its own (`setsid`): it is not in the parent's
    /// process group, does not get the terminal's `SIGINT`, and is left running when the loop
    /// ends. Off by default: the loop's ending kills a child still running.
    public var detached = false

    /// A command that runs `executable` with `arguments`.
    /// - Parameters:
    ///   - executable: a path, or a name looked up in `PATH`.
    ///   - arguments: the arguments after the program's name.
    public init(_ executable: String, arguments: [String] = []) {
        self.executable = executable
        self.arguments = arguments
    }

    /// The child's environment as `NAME=value` strings, or nil for the parent's own.
    func environmentStrings() -> [String]? {
        switch environment {
        case .inherit:
            return nil
        case .replacing(let variables):
            return variables.map { "\($0.key)=\($0.value)" }.sorted()
        case .extending(let variables):
            var merged = ProcessEnvironment.current()
            for (name, value) in variables { merged[name] = value }
            return merged.map { "\($0.key)=\($0.value)" }.sorted()
        }
    }

    /// Checks what the kernel would refuse with a less helpful error.
    func validate() throws(LoopError) {
        guard !executable.isEmpty, !executable.utf8.contains(0) else {
            throw .invalidArgument("a command's executable must be a non-empty path or name without zero bytes")
        }
        if arguments.contains(where: { $0.utf8.contains(0) }) {
            throw .invalidArgument("a command's arguments must not contain zero bytes")
        }
        for io in [standardInput, standardOutput, standardError] {
            if case .descriptor(let fd) = io, fd < 0 {
                throw .invalidArgument("a standard descriptor must be an open descriptor (got \(fd))")
            }
        }
    }
}

/// How a child process ended.
public enum ProcessTermination: Sendable, Equatable, CustomStringConvertible {
    /// It exited with this status (0 for success).
    case exited(Int32)
    /// A signal ended it.
    case signalled(Signal)

    /// Whether it exited with status 0.
    public var isSuccess: Bool { self == .exited(0) }

    /// "exited with status N" or "killed by signal N".
    public var description: String {
        switch self {
        case .exited(let status): return "exited with status \(status)"
        case .signalled(let signal): return "killed by \(signal)"
        }
    }
}
