
/// A loop running on a thread of its own, started by ``Loop/startThread(name:clock:postBudget:)``.
///
/// Keep the `LoopThread` for as long as the loop should run: releasing it shuts the loop down
/// and waits for its thread, like ``shutdown()``.
public final class LoopThread: Sendable {
    /// The loop this thread runs.
    public let loop: Loop
    private let thread: NativeThread
    private let joined = NativeMutex(false)

    fileprivate init(loop: Loop, thread: NativeThread) {
        self.loop = loop
        self.thread = thread
    }

    /// Shuts the loop down gracefully (see ``Loop/shutdown()``) and waits for its thread to end.
    /// Idempotent; callable from any thread but the loop's: called on the loop's own thread (which
    /// cannot wait for itself to end) it stops the program with a message saying to call
    /// ``Loop/shutdown()`` there instead.
    public func shutdown() {
        misusePrecondition(
            !loop.isOnLoopThread,
            "UVLoop: LoopThread.shutdown() called on the loop's own thread, which cannot wait for itself to end; call loop.shutdown() there instead")
        loop.shutdown()
        let mustJoin = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        if mustJoin { thread.join() }
    }

    deinit {
        if !joined.withLock({ $0 }) {
            loop.shutdown()
            thread.join()
        }
    }
}

extension Loop {
    /// Creates a loop on a new thread and runs it there until ``LoopThread/shutdown()``.
    ///
    /// Returns once the loop exists and accepts work. Callable from any thread.
    /// - Parameters:
    ///   - name: the thread's name, as shown by debuggers and `top -H` (at most 15 bytes are kept).
    ///   - clock: the loop's clock.
    ///   - postBudget: see ``Loop/init(clock:postBudget:)``.
    /// - Returns: the running thread; its ``LoopThread/loop`` accepts work at once.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a `postBudget` below 1;
    ///   ``LoopError/libuv(function:code:)`` when the thread or the loop cannot be created.
    public static func startThread(
        name: String = "uvloop", clock: LoopClockSource = .system, postBudget: Int = Loop.defaultPostBudget
    ) throws(LoopError) -> LoopThread {
        let started = ThreadEvent()
        let created = NativeMutex<Result<Loop, LoopError>?>(nil)
        let thread = try NativeThread.start {
            setCurrentThreadName(name)
            let result = Result { () throws(LoopError) -> Loop in try Loop(clock: clock, postBudget: postBudget) }
            created.withLock { $0 = result }
            started.signal()
            guard case .success(let loop) = result else { return }
            try? loop.run()
        }
        started.wait()
        switch created.withLock({ $0! }) {
        case .success(let loop):
            return LoopThread(loop: loop, thread: thread)
        case .failure(let error):
            thread.join()
            throw error
        }
    }
}
