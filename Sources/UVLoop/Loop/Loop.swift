import CLibUV

/// An event loop: one libuv `uv_loop_t` and the one thread that runs it (the loop's thread).
///
/// A `Loop` either owns its `uv_loop_t` (created by `init(clock:postBudget:)` or
/// `startThread(name:clock:)`, run with `run()` or stepped with `runOnce()` / `runUntilIdle()`),
/// or adopts one that C code owns and runs (`adopt(_:)`), in which case UVLoop only adds its
/// handles to it and never calls `uv_run`.
///
/// ## Threads
/// The loop's thread is fixed when the loop is created: the creating thread, the thread started
/// by `startThread`, or the thread that adopts a C loop. `post`, `invoke`, `postNextIteration`,
/// `schedule`, `shutdown` and `stop` may be called from any thread; running and stepping happen on
/// the loop's thread.
///
/// ## Ordering
/// - Work posted by one thread runs in the order it was posted (FIFO per producer). Posts from
///   different threads interleave in the order they reach the queue.
/// - Posted work runs in the turn that drains it, at most `postBudget` jobs per drain; a job posted
///   while the loop drains runs in a later drain, so a job that re-posts itself cannot keep the
///   loop from polling for I/O or firing timers.
/// - Next-iteration work runs after the loop has polled for I/O (libuv's check phase), from a
///   snapshot taken when the phase begins: work queued while the snapshot runs waits for the next
///   turn. Next-iteration work sent from another thread is ordered with that thread's posts: it
///   joins the next-iteration queue when the loop drains it.
/// - Timers fire in (deadline, schedule order); see `schedule(after:_:)`. One turn fires at most
///   `postBudget` due timers; the rest of a larger burst fires in the next turns, still in order,
///   after a poll for I/O that does not block.
///
/// ## Shutdown
/// `shutdown()` refuses new work (posting throws `LoopError.shutDown`), runs everything posted
/// before it began, cancels pending timers (sleepers throw `LoopError.shutDown`), closes every
/// handle and closes the `uv_loop_t`. Nothing posted is dropped silently: it runs, or the call that
/// posted it throws. Swift concurrency jobs, which cannot be refused, are described in the
/// executor documentation (LoopExecutor.swift): none is dropped either.
///
/// Releasing the last reference shuts a loop down too (an adopted one: detaches it). What is
/// still queued then runs on the releasing thread, so a loop with queued work must be released
/// on its own thread (or shut down first); elsewhere that stops the program with a message that
/// says so.
public final class Loop: Sendable {
    let queue: PostQueue
    /// The status of every timer, shared with the timers' handles (any thread).
    let timerSlots: TimerSlots
    let confined: LoopConfinedObject<LoopEngine>
    let wake: WakeHandle
    let native: NativeLoop
    /// The thread that runs this loop.
    let thread: ThreadIdentity
    /// `ThreadNumbers.shared`, held so that `isOnLoopThread` skips the lazy global's
    /// initialization check (it runs on every timer schedule and cancel).
    private let threadNumbers = ThreadNumbers.shared
    /// The loop as its actors' executor, and where executor jobs enter the queue (LoopExecutor.swift).
    let serialExecutor: LoopSerialExecutor

    /// Creates a loop owned by this process, whose thread is the calling thread.
    ///
    /// - Parameters:
    ///   - clock: where the loop's time comes from: the system's monotonic clock (the default), or
    ///     a manual clock that only tests move (see `UVLoopTesting`).
    ///   - postBudget: the most posted jobs one drain runs, and the most due timers one turn fires,
    ///     before the loop polls for I/O again.
    public convenience init(clock: LoopClockSource = .system, postBudget: Int = 4096) throws(LoopError) {
        guard postBudget > 0 else {
            throw LoopError.invalidArgument("postBudget must be at least 1 (got \(postBudget))")
        }
        try self.init(native: NativeLoop.create(), clock: clock, postBudget: postBudget)
    }

    init(
        native: NativeLoop, clock: LoopClockSource, postBudget: Int, timerSlots: TimerSlots = TimerSlots()
    ) throws(LoopError) {
        let queue = PostQueue(refusesAsDetached: !native.isOwned)
        let state: LoopEngine
        do {
            state = try LoopEngine(
                native: native, queue: queue, clock: clock, postBudget: postBudget, timerSlots: timerSlots)
        } catch {
            if native.isOwned { _ = native.closeOwned() }
            throw error
        }
        self.queue = queue
        self.timerSlots = timerSlots
        self.native = native
        self.wake = state.wake
        self.confined = LoopConfinedObject(state)
        self.thread = .current
        self.clockSource = clock
        self.serialExecutor = LoopSerialExecutor(queue: queue, wake: state.wake, thread: thread, confined: confined)
        state.executors = LoopExecutorRefs(serial: serialExecutor.asUnownedSerialExecutor(), task: asUnownedTaskExecutor())
    }

    /// Adopts a `uv_loop_t` that C code owns and runs. Call it on the thread that runs that loop.
    ///
    /// UVLoop adds its handles to the loop (the one that wakes it for posted work is unreferenced,
    /// so it does not keep the owner's `uv_run` alive) and never calls `uv_run` itself: the owner's
    /// turns run posted work, timers and next-iteration work. Before the owner closes the loop, call
    /// `detach()` and let the loop turn once, so that `uv_loop_close` returns 0.
    /// - Parameters:
    ///   - loop: the owner's loop, initialized and not yet closed.
    ///   - postBudget: see `init(clock:postBudget:)`.
    public static func adopt(
        _ loop: UnsafeMutablePointer<uv_loop_t>, postBudget: Int = 4096
    ) throws(LoopError) -> Loop {
        guard postBudget > 0 else {
            throw LoopError.invalidArgument("postBudget must be at least 1 (got \(postBudget))")
        }
        let adopted = try Loop(native: .adopt(loop), clock: .system, postBudget: postBudget)
        adopted.confined.value.isRunning = true
        return adopted
    }

    deinit {
        // No thread can be inside `run()` (it holds a reference), so closing here races nothing.
        let state = confined.value
        guard !state.handlesClosed else { return }
        if !native.isOwned {
            // UVLoop's handles call back into `state`, which goes with this object: they must be
            // closed, and only the owner's thread may touch its loop.
            precondition(
                isOnLoopThread,
                "UVLoop: an adopted Loop was released on another thread while still attached; call detach() on the owner's loop thread first")
        } else if !isOnLoopThread {
            // Shutting down runs what is still queued, which must happen on the loop's thread.
            precondition(
                !state.hasQueuedWork,
                "UVLoop: a Loop with work still queued was released on another thread; shut it down on its own thread first (shutdown(), then runOnce())")
        }
        queue.state.withLock { [queue] in
            if $0.phase == .open { $0.phase = .shuttingDown }
            queue.acceptsWork.store(false, ordering: .releasing)
        }
        // An adopted loop released by a job it is running (the job held the last reference):
        // the detach finishes when that callback returns, which keeps `state` alive until then.
        // (An owned loop is never released inside its callbacks: whoever runs it holds it.)
        if !native.isOwned, state.isInCallback { return }
        state.shutDownNow(finalPhase: native.isOwned ? .closed : .detached, onLoopThread: isOnLoopThread)
        if native.isOwned { _ = native.closeOwned() }
    }

    // MARK: identity

    /// Whether the caller is on the loop's thread.
    @inline(__always)
    public var isOnLoopThread: Bool { threadNumbers.current == thread.raw }

    /// Stops the program with a message naming the misuse unless called on the loop's thread.
    public func preconditionOnLoopThread(
        _ operation: @autoclosure () -> String = "this code", file: StaticString = #fileID, line: UInt = #line
    ) {
        precondition(
            isOnLoopThread,
            "UVLoop: \(operation()) must run on the loop's thread; use loop.post or loop.invoke to get there",
            file: file, line: line)
    }

    /// The loop's current time: the manual clock's value, or the system's monotonic clock.
    public var now: LoopInstant {
        if clockSource == .manual {
            preconditionOnLoopThread("reading a manual clock")
            return LoopInstant(nanoseconds: confined.value.manualNow)
        }
        return LoopInstant(nanoseconds: monotonicNanoseconds())
    }

    /// Which clock this loop uses.
    public let clockSource: LoopClockSource

    /// Whether the loop still accepts work.
    public var isAcceptingWork: Bool { queue.isOpen }
}
