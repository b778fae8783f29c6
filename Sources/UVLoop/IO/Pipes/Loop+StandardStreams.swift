/// One of the process's standard streams: descriptors 0, 1 and 2.
public enum StandardStream: Int32, Sendable, Hashable, CustomStringConvertible {
    /// Standard input, descriptor 0.
    case input = 0
    /// Standard output, descriptor 1.
    case output = 1
    /// Standard error, descriptor 2.
    case error = 2

    /// `standard input`, `standard output` or `standard error`.
    public var description: String {
        switch self {
        case .input: "standard input"
        case .output: "standard output"
        case .error: "standard error"
        }
    }
}

extension Loop {
    /// Opens a standard stream as a stream, whatever it is: a terminal (then
    /// ``StreamConnection/isTerminal`` is true, with its modes and window size), a pipe, or a
    /// socket (an inetd-style service's connection).
    ///
    /// ```swift
    /// let input = try loop.openStandardStream(.input)
    /// let output = try loop.openStandardStream(.output)
    /// try input.startReading { _, read in
    ///     if case .bytes(let bytes) = read { try? output.write(bytes) }
    /// }
    /// ```
    ///
    /// The stream borrows the descriptor (see ``DescriptorOwnership/borrow``): closing it leaves
    /// the process's standard stream open, with its blocking mode as it was, so `print` and a
    /// later stream still work. A terminal is reopened, so that the non-blocking mode libuv needs
    /// stays the process's own. Write to one standard stream through one stream at a time
    /// (`print` has a buffer of its own: flush it before writing through the stream).
    /// Callable from any thread.
    /// - Parameter stream: which standard stream.
    /// - Returns: the stream, open; it does not read until asked.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when the standard stream is a regular file or a
    ///   device such as `/dev/null` (as when a shell redirects it from or to a file, or a service
    ///   manager starts the program with no input): read or write it with file operations
    ///   instead; when it is closed, a datagram or listening socket, or already open as a stream
    ///   on this loop. Otherwise like ``openConnection(descriptor:ownership:)``.
    public func openStandardStream(_ stream: StandardStream) throws(LoopError) -> StreamConnection {
        let descriptor = stream.rawValue
        let kind: StreamHandle.Kind
        switch OpenedDescriptor.kind(of: descriptor) {
        case .terminal: kind = .tty
        case .pipe: kind = .pipe
        case .socket(let unix): kind = unix ? .pipe : .tcp
        case .file:
            throw .invalidArgument(
                "\(stream) (descriptor \(descriptor)) is a regular file or a device that is not a terminal (redirected from or to a file, or /dev/null), which cannot be a stream; read or write it with file operations (read(2), write(2), or work on the thread pool)")
        case .notOpen:
            throw .invalidArgument("\(stream) (descriptor \(descriptor)) is closed; start the program with it open")
        case .listeningSocket:
            throw .invalidArgument(
                "\(stream) (descriptor \(descriptor)) is a listening socket; listen on it with loop.listen(descriptor:ownership:)")
        case .datagramSocket, .unknown:
            throw .invalidArgument(
                "\(stream) (descriptor \(descriptor)) is neither a terminal, a pipe nor a stream socket, so it cannot be a stream; use it with the API for what it is")
        }
        return try openOnLoopThread { () throws(LoopError) in
            StreamConnection(core: try StreamConnectionCore(loop: self, descriptor: descriptor, kind: kind, ownership: .borrow))
        }
    }
}
