import CLibUV

/// An event loop: one libuv `uv_loop_t` and the one thread that runs it (the loop's thread).
///
/// A `Loop` either owns its `uv_loop_t` (created by ``init(clock:postBudget:)`` or
/// ``startThread(name:clock:postBudget:)``, run with ``run()`` or stepped with ``runOnce()`` and
/// ``runUntilIdle(maxIterations:)``), or attaches one that C code owns and runs
/// (``attach(_:postBudget:)-(UnsafeMutablePointer<uv_loop_t>,_)``), in which case UVLoop only adds its handles to it and never calls
/// `uv_run`.
///
/// ## Threads
/// The loop's thread is fixed when the loop is created: the creating thread, the thread started
/// by ``startThread(name:clock:postBudget:)``, or the thread that attaches a C loop. ``post(_:)``,
/// ``invoke(_:)-63lio``, ``postNextIteration(_:)``, ``schedule(after:_:)``, ``shutdown()`` and
/// ``stop()`` may be called from any thread; running and stepping happen on the loop's thread.
///
/// ## Ordering
/// - Work posted by one thread runs in the order it was posted (FIFO per producer). Posts from
///   different threads interleave in the order they reach the queue.
/// - Posted work runs in the turn that drains it, at most `postBudget` jobs per drain, so a job
///   that re-posts itself cannot keep the loop from polling for I/O or firing timers. A job the
///   loop's own thread posts while the loop drains runs in a later drain; one that another thread
///   posts meanwhile may join the drain under way.
/// - Next-iteration work runs after the loop has polled for I/O (libuv's check phase), from a
///   snapshot taken when the phase begins: work queued while the snapshot runs waits for the next
///   turn. Next-iteration work sent from another thread is ordered with that thread's posts: it
///   joins the next-iteration queue when the loop drains it.
/// - Timers fire in (deadline, schedule order); see ``schedule(after:_:)``. One turn fires at most
///   `postBudget` due timers; the rest of a larger burst fires in the next turns, still in order,
///   after a poll for I/O that does not block.
/// - Swift concurrency jobs (the steps of actors that run on the loop, and of tasks that prefer
///   it) go through the same first-in, first-out queue as posts, with the same budget per drain:
///   a job enqueued after a post from the same thread runs after that post, and before a later
///   one. A job enqueued on the loop's own thread (for example by an actor method that starts a
///   `Task`) is queued like a post and never runs inline. Job priorities do not reorder the queue.
///
/// ## Swift concurrency
/// A `Loop` is a `SerialExecutor` that actors can run on (see ``unownedExecutor``) and a
/// `TaskExecutor` that tasks can prefer (`Task(executorPreference: loop) { ... }`). Steps of
/// actors run isolated to the loop; steps of tasks that merely prefer it run as nonisolated code,
/// on the loop's thread. One actor on the loop calling another actor on the same loop continues
/// on the loop's thread without another trip through the queue, like calls between actors that
/// share an executor.
///
/// ``isIsolatingCurrentContext()`` and ``checkIsolated()`` accept exactly the code that cannot
/// run at the same time as the loop's jobs: code on the loop's thread until the loop closes
/// (posted work, timer callbacks, code between the steps of a stepped loop), and, after it
/// closed, the thread running its late jobs (see "Shutdown"). So `assumeIsolated` works for an
/// actor on the loop (or ``MainLoopActor``) inside ``post(_:)``, `invoke` and timer callbacks,
/// and traps anywhere else.
///
/// ## Shutdown
/// ``shutdown()`` refuses new work (posting throws ``LoopError/shutDown``), runs everything
/// posted before it began, cancels pending timers (sleepers throw ``LoopError/shutDown``), closes
/// every handle and closes the `uv_loop_t`. Nothing posted is dropped silently: it runs, or the
/// call that posted it throws.
///
/// Swift concurrency jobs cannot be refused (an executor's `enqueue` cannot throw, and a job that
/// never runs is a task suspended forever), so the loop never drops one:
/// - while shutting down, jobs are still queued, and the shutdown drain runs them on the loop's
///   thread; the loop closes only once a drain leaves none behind. Jobs that shutdown itself
///   causes on the loop's thread (work it drains starting tasks, tick sequences ending) run there;
/// - once the loop has closed (or been detached) there is no loop thread to run them, so a job
///   runs on the thread that enqueued it, still one at a time and in order: while one thread runs
///   such jobs, the others queue theirs for it. That covers actors used after shutdown, and a
///   task that shutdown resumed (a sleep failing with ``LoopError/shutDown``) whose way back to
///   its actor passes through the global pool and arrives after the close. Such code is not on
///   the loop's thread; what needs the loop (``post(_:)``, ``schedule(after:_:)``,
///   ``sleep(for:isolation:)``) throws ``LoopError/shutDown``.
///
/// Releasing the last reference shuts a loop down too (an attached one: detaches it). What is
/// still queued then runs on the releasing thread, so a loop with queued work must be released
/// on its own thread (or shut down first); elsewhere that stops the program with a message that
/// says so.
///
/// Work that captures its own loop (a pending timer, an inbox's receiver, a chunked loop or a
/// tick sequence whose closure holds the ``Loop`` or a ``LoopBound`` of it) keeps the loop alive
/// until that work has run or been cancelled: releasing your last reference then does not end
/// the loop. Call ``shutdown()`` (``detach()`` for an attached loop): it releases everything the
/// pending work captured, and the loop with it.
public final class Loop: Sendable {
    /// The loop's phase and every "may I?" question (see `LoopLifecycle`).
    let lifecycle: LoopLifecycle
    let queue: PostQueue
    /// The status of every timer, shared with the timers' handles (any thread).
    let timerSlots: TimerSlots
    /// The loop's engine, in the box its closures capture (`[confined]`) to avoid retaining the
    /// loop. Read it as ``engine``.
    let confined: LoopConfinedObject<LoopEngine>
    let wake: WakeHandle
    let native: NativeLoop
    /// The thread that runs this loop.
    let thread: ThreadIdentity
    /// The loop thread's thread pointer (what `pthread_self()` returns): a check against it costs
    /// one instruction where ``isOnLoopThread`` looks up a thread-specific value, for the C API's
    /// per-post check. Different for every live thread; a thread started after the loop's thread
    /// has exited may get the same value, and must then be treated as any thread.
    package let threadPointer: UInt
    /// `ThreadNumbers.shared`, held so that `isOnLoopThread` skips the lazy global's
    /// initialization check (it runs on every timer schedule and cancel).
    let threadNumbers = ThreadNumbers.shared
    /// The loop as its actors' executor, and where executor jobs enter the queue.
    let serialExecutor: LoopSerialExecutor
    /// The manual clock's reading, shared with the loop's engine (see ``now``).
    let manualTime: ManualTime
    /// The figures ``metrics()`` reads, published by the loop's thread each turn.
    let metricsRecorder: LoopMetricsRecorder
    /// Whether the process forked since the loop's kernel objects were made (``afterFork()``).
    package let forkState: LoopForkState
    /// Orders reads of a connection's addresses on other threads before the loop's thread closes
    /// its descriptor (see StreamConnection+Addresses.swift).
    let connectionAddressReads = ConnectionAddressReads()
    /// The buffer every stream on this loop reads into (see `StreamReadBuffer`), allocated by the
    /// first. Kept here, two loads from a stream's core, because libuv asks for it before every
    /// read. Loop thread only.
    let streamReadBuffer = LoopConfinedReference(StreamReadBuffer())

    /// Creates a loop owned by this process, whose thread is the calling thread.
    ///
    /// The loop does not run until its thread calls ``run()`` (or steps it with ``runOnce()``);
    /// work posted before then waits. To run a loop on a thread of its own, use
    /// ``startThread(name:clock:postBudget:)``.
    ///
    /// - Parameters:
    ///   - clock: where the loop's time comes from: the system's monotonic clock (the default), or
    ///     a manual clock that only tests move (see the `UVLoopTesting` module).
    ///   - postBudget: the most posted jobs one drain runs, and the most due timers one turn fires,
    ///     before the loop polls for I/O again.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a `postBudget` below 1;
    ///   ``LoopError/libuv(function:code:)`` when libuv cannot create the loop or its handles.
    public convenience init(clock: LoopClockSource = .system, postBudget: Int = Loop.defaultPostBudget) throws(LoopError) {
        guard postBudget > 0 else {
            throw LoopError.invalidArgument("postBudget must be at least 1 (got \(postBudget))")
        }
        try self.init(native: NativeLoop.create(), clock: clock, postBudget: postBudget)
    }

    init(
        native: NativeLoop, clock: LoopClockSource, postBudget: Int, timerSlots: TimerSlots = TimerSlots()
    ) throws(LoopError) {
        let lifecycle = LoopLifecycle(attached: !native.isOwned)
        let queue = PostQueue(lifecycle: lifecycle)
        let engine: LoopEngine
        do {
            engine = try LoopEngine(
                native: native, queue: queue, clock: clock, postBudget: postBudget, timerSlots: timerSlots)
        } catch {
            if native.isOwned { _ = native.closeOwned() }
            throw error
        }
        self.lifecycle = lifecycle
        self.queue = queue
        self.timerSlots = timerSlots
        self.native = native
        self.wake = engine.wake
        self.confined = LoopConfinedObject(engine)
        self.manualTime = engine.manualTime
        self.metricsRecorder = engine.metricsRecorder
        self.forkState = engine.forkState
        self.thread = .current
        self.threadPointer = shim_thread_pointer()
        self.clockSource = clock
        self.serialExecutor = LoopSerialExecutor(queue: queue, wake: engine.wake, thread: thread, confined: confined)
        engine.executors = LoopExecutorRefs(serial: serialExecutor.asUnownedSerialExecutor(), task: asUnownedTaskExecutor())
    }

    /// Attaches a `uv_loop_t` that C code owns and runs. Call it on the thread that runs that loop.
    ///
    /// UVLoop adds its handles to the loop (the one that wakes it for posted work is unreferenced,
    /// so it does not keep the owner's `uv_run` alive) and never calls `uv_run` itself: the owner's
    /// turns run posted work, timers and next-iteration work. Before the owner closes the loop, call
    /// ``detach()`` and let the loop turn once, so that `uv_loop_close` returns 0.
    /// - Parameters:
    ///   - loop: the owner's loop, initialized and not yet closed.
    ///   - postBudget: see ``init(clock:postBudget:)``.
    /// - Returns: the loop, attached to the owner's `uv_loop_t`; its thread is the calling thread.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a `postBudget` below 1;
    ///   ``LoopError/alreadyAttached`` when UVLoop is already attached to `loop` (and not yet
    ///   detached); ``LoopError/libuv(function:code:)`` when libuv cannot create UVLoop's handles.
    public static func attach(
        _ loop: UnsafeMutablePointer<uv_loop_t>, postBudget: Int = Loop.defaultPostBudget
    ) throws(LoopError) -> Loop {
        guard postBudget > 0 else {
            throw LoopError.invalidArgument("postBudget must be at least 1 (got \(postBudget))")
        }
        guard AttachedLoops.insert(loop) else { throw LoopError.alreadyAttached }
        let attached: Loop
        do {
            attached = try Loop(native: .attach(loop), clock: .system, postBudget: postBudget)
        } catch {
            AttachedLoops.remove(loop)
            throw error
        }
        attached.engine.isRunning = true
        return attached
    }

    /// Attaches the `uv_loop_t` at `loop`, given as an untyped pointer: for a package that gets the
    /// loop from its own C code and does not import libuv's Swift module. See
    /// ``attach(_:postBudget:)-(UnsafeMutablePointer<uv_loop_t>,_)``.
    /// - Parameters:
    ///   - loop: the address of the owner's `uv_loop_t`, initialized and not yet closed.
    ///   - postBudget: see ``init(clock:postBudget:)``.
    /// - Returns: the loop, attached to the owner's `uv_loop_t`; its thread is the calling thread.
    /// - Throws: like the typed ``attach(_:postBudget:)-(UnsafeMutablePointer<uv_loop_t>,_)``.
    public static func attach(_ loop: UnsafeMutableRawPointer, postBudget: Int = Loop.defaultPostBudget) throws(LoopError) -> Loop {
        try attach(loop.assumingMemoryBound(to: uv_loop_t.self), postBudget: postBudget)
    }

    /// Attaches a `uv_loop_t` that C code owns; the former name of
    /// ``attach(_:postBudget:)-(UnsafeMutablePointer<uv_loop_t>,_)``.
    /// - Parameters:
    ///   - loop: the owner's loop, initialized and not yet closed.
    ///   - postBudget: see ``init(clock:postBudget:)``.
    /// - Returns: the loop, attached to the owner's `uv_loop_t`.
    /// - Throws: like ``attach(_:postBudget:)-(UnsafeMutablePointer<uv_loop_t>,_)``.
    @available(*, deprecated, renamed: "attach(_:postBudget:)")
    public static func adopt(
        _ loop: UnsafeMutablePointer<uv_loop_t>, postBudget: Int = Loop.defaultPostBudget
    ) throws(LoopError) -> Loop {
        try attach(loop, postBudget: postBudget)
    }

    /// Attaches the `uv_loop_t` at `loop`, given as an untyped pointer; the former name of
    /// ``attach(_:postBudget:)-(UnsafeMutableRawPointer,_)``.
    /// - Parameters:
    ///   - loop: the address of the owner's `uv_loop_t`, initialized and not yet closed.
    ///   - postBudget: see ``init(clock:postBudget:)``.
    /// - Returns: the loop, attached to the owner's `uv_loop_t`.
    /// - Throws: like ``attach(_:postBudget:)-(UnsafeMutableRawPointer,_)``.
    @available(*, deprecated, renamed: "attach(_:postBudget:)")
    public static func adopt(_ loop: UnsafeMutableRawPointer, postBudget: Int = Loop.defaultPostBudget) throws(LoopError) -> Loop {
        try attach(loop, postBudget: postBudget)
    }

    /// The most posted jobs one drain runs, and the most due timers one turn fires, before the
    /// loop polls for I/O again: the `postBudget` of a loop created without one.
    public static let defaultPostBudget = 4096

    deinit {
        // No thread can be inside `run()` (it holds a reference), so closing here races nothing.
        guard !lifecycle.handlesClosed else { return }
        if !native.isOwned {
            // UVLoop's handles call back into `engine`, which goes with this object: they must be
            // closed, and only the owner's thread may touch its loop.
            misusePrecondition(
                isOnLoopThread,
                "UVLoop: an attached Loop was released on another thread while still attached; call detach() on the owner's loop thread first")
        } else if !isOnLoopThread {
            // Shutting down runs what is still queued, which must happen on the loop's thread.
            misusePrecondition(
                !engine.hasQueuedWork,
                "UVLoop: a Loop with work still queued was released on another thread; shut it down on its own thread first (shutdown(), then runOnce())")
        }
        lifecycle.beginRelease()
        // An attached loop released by a job it is running (the job held the last reference):
        // the detach finishes when that callback returns, which keeps `engine` alive until then.
        // (An owned loop is never released inside its callbacks: whoever runs it holds it.)
        if !native.isOwned, engine.isInCallback { return }
        engine.finishEnding(onLoopThread: isOnLoopThread)
        if native.isOwned { _ = native.closeOwned() }
    }

    /// The loop's engine: everything only its thread touches. Loop thread only.
    @inline(__always)
    var engine: LoopEngine { confined.value }

    // MARK: identity

    /// Whether the caller is on the loop's thread. Callable from any thread.
    @inline(__always)
    public var isOnLoopThread: Bool { threadNumbers.current == thread.raw }

    /// Stops the program with a message naming the misuse unless called on the loop's thread.
    ///
    /// - Parameters:
    ///   - operation: what the caller was doing, for the message.
    ///   - file: the file reported with the message.
    ///   - line: the line reported with the message.
    public func preconditionOnLoopThread(
        _ operation: @autoclosure () -> String = "this code", file: StaticString = #fileID, line: UInt = #line
    ) {
        misusePrecondition(
            isOnLoopThread,
            "UVLoop: \(operation()) must run on the loop's thread; use loop.post or loop.invoke to get there",
            file: file, line: line)
    }

    /// The loop's current time: the manual clock's value, or the system's monotonic clock.
    ///
    /// Callable from any thread. A manual clock reads the time the test last advanced it to, on
    /// every thread, once the advance has returned.
    public var now: LoopInstant {
        if clockSource == .manual { return LoopInstant(nanoseconds: manualTime.now) }
        return LoopInstant(nanoseconds: monotonicNanoseconds())
    }

    /// Which clock this loop uses.
    public let clockSource: LoopClockSource

    /// Whether the loop still accepts work: false once ``shutdown()`` or ``detach()`` has begun.
    /// Callable from any thread; another thread may shut the loop down right after it reads true.
    public var isAcceptingWork: Bool { lifecycle.acceptsWork }
}
