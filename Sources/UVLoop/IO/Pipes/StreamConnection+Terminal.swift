import CLibUV

/// How a terminal passes what is typed: see ``StreamConnection/setTerminalMode(_:)``.
public enum TerminalMode: Sendable, Hashable {
    /// Line by line, echoed by the terminal, with its editing keys and Ctrl-C as `SIGINT`: the
    /// mode a terminal starts in.
    case normal
    /// Key by key, not echoed, Ctrl-C and Ctrl-D as bytes: what an editor or a prompt with its
    /// own line editing wants. Output is still translated (`\n` becomes `\r\n`).
    case raw
    /// Raw both ways: no translation of input or output either (`cfmakeraw`), for binary
    /// protocols over a serial line or a terminal.
    case binary

    var native: uv_tty_mode_t {
        switch self {
        case .normal: UV_TTY_MODE_NORMAL
        case .raw: UV_TTY_MODE_RAW
        case .binary: UV_TTY_MODE_IO
        }
    }
}

/// A terminal's window size, in character cells.
public struct TerminalSize: Sendable, Hashable, CustomStringConvertible {
    /// The number of columns.
    public let columns: Int
    /// The number of rows.
    public let rows: Int

    /// A size of `columns` by `rows`.
    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    /// `80x24`.
    public var description: String { "\(columns)x\(rows)" }
}

extension StreamConnection {
    /// Whether the stream is a terminal (opened on one with
    /// ``Loop/openConnection(descriptor:ownership:)`` or ``Loop/openStandardStream(_:)``).
    /// Loop thread only.
    public var isTerminal: Bool {
        let core = core("StreamConnection.isTerminal")
        return core.isOpen && core.handle.kind == .tty
    }

    /// Sets how the terminal passes what is typed (`uv_tty_set_mode`). Loop thread only.
    ///
    /// The terminal is put back in ``TerminalMode/normal`` when the stream closes (by you, or by
    /// the loop's shutdown or detach), when the process exits, and when SIGINT, SIGTERM or SIGHUP
    /// ends it with their default action. (A program that watches those signals restores the
    /// mode by closing the stream, or the loop, in its handler.) Only the process's first
    /// terminal to leave normal mode is restored at exit and on a signal: libuv saves one.
    /// - Parameter mode: the mode.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when the stream is not a terminal;
    ///   ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)`` when
    ///   the kernel refuses.
    public func setTerminalMode(_ mode: TerminalMode) throws(LoopError) {
        let core = try terminalCore("setTerminalMode")
        if mode != .normal { TerminalModeRestore.install() }
        let status = core.handle.setTerminalMode(mode.native)
        guard status == 0 else { throw .libuv(status, "uv_tty_set_mode") }
    }

    /// The terminal's window size now (`TIOCGWINSZ`). Loop thread only.
    /// - Returns: columns and rows.
    /// - Throws: like ``setTerminalMode(_:)``.
    public func terminalSize() throws(LoopError) -> TerminalSize {
        let (columns, rows) = try terminalCore("terminalSize").handle.terminalSize().get()
        return TerminalSize(columns: columns, rows: rows)
    }

    /// Calls `handler` on the loop's thread with the terminal's new size whenever its window
    /// changes (each `SIGWINCH`). Callable from any thread.
    ///
    /// The handler runs once per delivery of the signal, which the kernel sends to the terminal's
    /// foreground processes; sizes that change faster than the loop turns are seen as the latest.
    /// It is not called once the stream has closed. A watch of `SIGWINCH` (see
    /// ``Loop/watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)``) lies beneath: cancel it to
    /// stop.
    /// - Parameter handler: gets the stream and its new size.
    /// - Returns: the signal watch.
    /// - Throws: like ``Loop/watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)``.
    @discardableResult
    public func watchTerminalSize(
        _ handler: @escaping @Sendable (StreamConnection, TerminalSize) -> Void
    ) throws(LoopError) -> SignalWatch {
        try loop.watchSignal(.windowSizeChanged) { [self] _ in
            guard let size = try? terminalSize() else { return }
            handler(self, size)
        }
    }

    /// The terminal's sizes as its window changes, as an `AsyncSequence`: each element is the
    /// size after a change (sizes that change while the consumer is busy are merged into the
    /// latest). Callable from any thread; iterate it once.
    ///
    /// The sequence ends when its watch is cancelled (``TerminalSizes/watch``), when the loop
    /// shuts down or is detached, and when the iterating task is cancelled; leaving the iteration
    /// cancels the watch.
    /// - Returns: the sizes.
    /// - Throws: like ``watchTerminalSize(_:)``.
    public func terminalSizes() throws(LoopError) -> TerminalSizes {
        let channel = IOEventChannel<TerminalSize>(merge: { _, latest in latest })
        let box = box
        let watch = SignalWatch(
            loop: loop, signal: .windowSizeChanged, oneShot: false,
            handler: { _ in
                let core = box.value
                guard core.isOpen, core.handle.kind == .tty, case .success(let size) = core.handle.terminalSize() else { return }
                channel.deliver(TerminalSize(columns: size.columns, rows: size.rows))
            },
            onEnd: { channel.finish() })
        try loop.openHandle { () throws(LoopError) in try watch.start(keepsOwnerLoopAlive: false) }
        return TerminalSizes(watch: watch, channel: channel)
    }

    private func terminalCore(_ operation: String) throws(LoopError) -> StreamConnectionCore {
        let core = core("StreamConnection.\(operation)")
        if let reason = core.closeReason { throw reason }
        guard core.handle.kind == .tty else {
            throw .invalidArgument("\(operation) applies to terminals; this stream is a socket or a pipe (check isTerminal)")
        }
        return core
    }
}

/// A terminal's sizes as its window changes; see ``StreamConnection/terminalSizes()``.
public struct TerminalSizes: AsyncSequence, Sendable {
    /// The size after a change.
    public typealias Element = TerminalSize
    /// The sizes never fail: the sequence ends instead.
    public typealias Failure = Never

    /// The `SIGWINCH` watch behind the sequence: ``SignalWatch/cancel()`` ends it from any thread.
    public var watch: SignalWatch { owner.watch }

    let owner: WatchOwner<SignalWatch>
    let channel: IOEventChannel<TerminalSize>

    init(watch: SignalWatch, channel: IOEventChannel<TerminalSize>) {
        self.owner = WatchOwner<SignalWatch>(watch)
        self.channel = channel
    }

    /// The iterator; dropping it (leaving `for await`) cancels the watch.
    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: owner, owner: WatchOwner<SignalWatch>(owner.watch), channel: channel)
    }

    /// One consumer's view of the sizes. Not `Sendable`: one task iterates it.
    public struct Iterator: AsyncIteratorProtocol {
        /// The size after a change.
        public typealias Element = TerminalSize
        /// The sizes never fail: the sequence ends instead.
        public typealias Failure = Never

        let sequence: WatchOwner<SignalWatch>
        let owner: WatchOwner<SignalWatch>
        let channel: IOEventChannel<TerminalSize>

        /// The next size, or `nil` once the watch has ended.
        public mutating func next() async -> TerminalSize? {
            await next(isolation: nil)
        }

        /// The next size, or `nil` once the watch has ended. Waits on the caller's actor.
        /// - Parameter actor: the caller's actor; leave the default.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> TerminalSize? {
            let watch = owner.watch
            watch.loop.preconditionSteppedWhileAwaiting("a terminal's size changes")
            let result = await channel.next(isolation: actor, willWait: {}, onCancel: { watch.cancel() })
            guard case .success(let size)? = result else { return nil }
            return size
        }
    }
}

@available(*, unavailable)
extension TerminalSizes.Iterator: Sendable {}

extension IsolatedLoop {
    /// Calls `handler` on the loop's thread with `terminal`'s new size whenever its window
    /// changes; see ``StreamConnection/watchTerminalSize(_:)``. The handler may capture
    /// loop-thread state (it is not `@Sendable`).
    /// - Parameters:
    ///   - terminal: a stream on a terminal, of this loop.
    ///   - handler: gets the stream and its new size.
    /// - Returns: the signal watch; cancel it to stop.
    /// - Throws: like ``StreamConnection/watchTerminalSize(_:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func watchTerminalSize(
        of terminal: StreamConnection, _ handler: @escaping (StreamConnection, TerminalSize) -> Void
    ) throws(LoopError) -> SignalWatch {
        loop.preconditionOnLoopThread("IsolatedLoop.watchTerminalSize(of:_:)")
        let box = LoopConfined(handler)
        return try terminal.watchTerminalSize { terminal, size in box.value(terminal, size) }
    }
}
