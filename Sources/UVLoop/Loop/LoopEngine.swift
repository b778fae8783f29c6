import CLibUV

/// Everything a loop owns that only its thread touches: the libuv handles, the consumer side of
/// the post queue, the next-iteration queue, the timers and the clock.
///
/// One turn of libuv 1.44 runs: timers, pending, idle, prepare, poll, check, closing. UVLoop uses:
/// - the idle handle (idle phase): active only while something is runnable without waiting
///   (posted work left over or posted from the loop thread, next-iteration work, due timers,
///   pending chunked loops), which also makes libuv poll with a zero timeout; it fires due timers
///   (one budget per turn), drains posted work, then runs one chunk of a chunked loop (see
///   `ChunkScheduler`);
/// - the prepare handle (prepare phase): before a poll that may block, runs work posted from
///   other threads since the last drain (their posts did not wake the loop, which was awake), or
///   tells producers that the next post must wake it;
/// - the wake handle (poll phase; an eventfd, see `WakeHandle`): drains work posted from other
///   threads;
/// - the wake timer (poll phase; a timerfd armed for the earliest deadline, see `WakeTimer`):
///   marks timers due and starts the idle handle, which fires them;
/// - the check handle (check phase): drains work the loop thread posted during poll, then runs
///   the next-iteration snapshot.
final class LoopEngine {
    let native: NativeLoop
    let lifecycle: LoopLifecycle
    let queue: PostQueue
    let clockSource: LoopClockSource
    let postBudget: Int

    private(set) var wake: WakeHandle!
    private(set) var idle: IdleHandle!
    private(set) var check: CheckHandle!
    private(set) var prepare: PrepareHandle!
    private(set) var wakeTimer: WakeTimer!
    let threadPool: ThreadPoolQueue

    /// The scalars and queues every turn reads (see `TurnState`), in `HeapStorage`, not stored
    /// `var`s, so that a turn pays no run-time exclusivity check on them.
    let turnStorage = HeapStorage(TurnState())

    /// Work the loop's own thread queued while the loop accepts work (posts and executor jobs),
    /// in queuing order. Only this thread touches it, so it needs no lock and no wake-up. In
    /// `HeapStorage`, not a stored `var`, so that a post pays no exclusivity check; `JobRing`'s
    /// methods never call user code.
    let ownJobs = HeapStorage(JobRing())

    /// The scheduled timers. In `HeapStorage`, not a stored `var`, so that scheduling and
    /// cancelling pay no exclusivity check; `TimerQueue`'s methods never call user code, so
    /// accesses cannot overlap.
    let timerStorage: HeapStorage<TimerQueue>

    var timers: TimerQueue {
        _read { yield timerStorage.value }
        _modify { yield &timerStorage.value }
    }
    /// The deadline the wake timer is armed for, if armed.
    var armedDeadline: UInt64?
    /// A burst that the budget cut short: the clock reading and sequence limit it began with.
    /// The next turn fires its rest (as part of a new burst); a shutdown fires it first, as it
    /// would have run in the same callback without the budget.
    var unfinishedBurst: (now: UInt64, sequenceLimit: UInt64)?
    /// The manual clock's reading (used only when `clockSource` is `.manual`); shared with the
    /// `Loop`, which reads it from any thread.
    let manualTime = ManualTime()
    var manualNow: UInt64 { manualTime.now }

    /// Pending chunked loops; while any is pending, the idle handle stays active.
    let chunkedLoops = ChunkScheduler()

    /// Set while a thread is inside `uv_run` for this loop (through UVLoop or its C owner).
    var isRunning = false
    /// Counts the I/O handles' callbacks, so that a stepped loop can tell a step with I/O from a
    /// quiet one (`Loop.runUntilIdle`).
    var ioCallbacksRun: UInt64 = 0
    /// One of this state's libuv callbacks is on the stack. A detach requested inside one waits
    /// for it to return (`afterCallback`): the callback may hold work it took out of the loop's
    /// structures (the rest of a drained batch, a next-iteration snapshot, a repeating timer
    /// between runs), and a shutdown run in its middle would miss that work and then see it
    /// restart handles already closed.
    private(set) var isInCallback = false
    /// On an attached loop: whether UVLoop's wake-up handle is referenced, keeping the owner's
    /// `uv_run` running (see `Loop.setKeepsOwnerLoopAlive`).
    var keepsOwnerLoopAlive = false
    /// The thread that created the engine (the attaching thread), until the first turn has shown
    /// that this is the thread running the loop; nil from then on.
    private var unconfirmedThread: ThreadIdentity?
    /// The open inboxes.
    let inboxes = LoopInboxes()
    /// The open I/O handles (signal watches, descriptor watches, streams, listeners, name
    /// lookups), and what they share on this loop.
    let ioHandles = LoopIOHandles()
    /// This turn's counts and the last turn's end, for `Loop.metrics()` and the stall handler. In
    /// `HeapStorage`, not a stored `var`, so that the per-turn accounting pays no exclusivity
    /// check; `TurnMetrics`' methods never call user code (the stall handler is called after
    /// its access has ended).
    let metricsStorage = HeapStorage(TurnMetrics())
    var metrics: TurnMetrics {
        _read { yield metricsStorage.value }
        _modify { yield &metricsStorage.value }
    }
    /// Whether the loop counts its idle time itself (an owned loop) or reads libuv's (an attached
    /// loop, whose owner's callbacks between the poll and UVLoop's first one are not idle).
    let measuresOwnIdleTime: Bool
    /// Where the figures are published for other threads; shared with the `Loop`.
    let metricsRecorder = LoopMetricsRecorder()
    /// The loop's executor identities, which jobs run on; set once the `Loop` exists.
    var executors: LoopExecutorRefs?
    /// Whether the process forked since the loop's kernel objects were made (see
    /// `LoopEngine+Fork.swift`); shared with the `Loop`, which checks it for C callers.
    let forkState = LoopForkState()

    init(
        native: NativeLoop, queue: PostQueue, clock: LoopClockSource, postBudget: Int, timerSlots: TimerSlots
    ) throws(LoopError) {
        timerStorage = HeapStorage(TimerQueue(shared: timerSlots))
        self.native = native
        self.lifecycle = queue.lifecycle
        self.queue = queue
        self.clockSource = clock
        self.postBudget = postBudget
        self.threadPool = ThreadPoolQueue(loop: native)
        self.measuresOwnIdleTime = native.isOwned
        do {
            wake = try WakeHandle(loop: native) { [unowned self] in self.onWake() }
            idle = try IdleHandle(loop: native) { [unowned self] in self.onIdle() }
            check = try CheckHandle(loop: native) { [unowned self] in self.onCheck() }
            prepare = try PrepareHandle(loop: native) { [unowned self] in self.onPrepare() }
            wakeTimer = try WakeTimer(loop: native) { [unowned self] in self.onWakeTimer() }
        } catch {
            // The handles made so far call back into this engine, which goes with the error:
            // close them before any turn can fire them (an owned loop is then closed; an owner's
            // loop keeps none of them).
            wake?.close()
            idle?.close()
            check?.close()
            prepare?.close()
            throw error
        }
        if !native.isOwned {
            // For `Loop.metrics()`'s idle time, measured from here on.
            _ = shim_loop_measure_idle_time(native.pointer)
            // On a loop that C code owns, waiting for posts must not keep the owner's uv_run alive.
            wake.unref()
            unconfirmedThread = .current
        }
    }

    // MARK: the clock

    @inline(__always)
    var now: UInt64 { clockSource == .manual ? manualNow : monotonicNanoseconds() }

    // MARK: libuv callbacks

    func onWake() {
        confirmLoopThread()
        isInCallback = true
        defer { isInCallback = false }
        drainPosted()
        afterCallback()
    }

    /// Runs `body`, the Swift side of an I/O handle's libuv callback (a signal delivered, a
    /// descriptor ready), as the engine's own callbacks run theirs: on the confirmed loop thread,
    /// marked as inside a callback (so that a `detach()` that `body` calls finishes when it
    /// returns), then handling stop and shutdown requests and keeping the idle and check handles
    /// active for the work `body` queued.
    func runIOCallback(_ body: () -> Void) {
        ioCallbacksRun &+= 1
        runAsCallback(body)
    }

    /// `runIOCallback` in two halves, for the hottest callbacks (a stream's reads and writes),
    /// which inline them around their body: `runIOCallback`'s closure, capturing the handle's
    /// core, costs a retain and release of the core per call. Call `endIOCallback` with what
    /// this returned once the body has run.
    /// - Returns: whether this is the outermost callback (then `endIOCallback` runs
    ///   `afterCallback`).
    @inline(__always)
    func beginIOCallback() -> Bool {
        ioCallbacksRun &+= 1
        confirmLoopThread()
        if isInCallback { return false }
        isInCallback = true
        return true
    }

    /// Ends what `beginIOCallback` began.
    @inline(__always)
    func endIOCallback(_ outermost: Bool) {
        guard outermost else { return }
        afterCallback()
        isInCallback = false
    }

    /// Ends what `beginIOCallback` began, for callbacks that libuv delivers in bursts (the thread
    /// pool's completions: every request finished since the last poll, one after another from one
    /// wake-up in the poll phase). Stop and shutdown requests are handled at once, as
    /// `afterCallback` handles them; the handles' update is left to the check phase of this turn,
    /// which comes before the loop can poll again and runs `afterCallback` once for the burst.
    @inline(__always)
    func endBurstIOCallback(_ outermost: Bool) {
        guard outermost else { return }
        if handleStopAndEnding(), !check.isActive { check.start() }
        isInCallback = false
    }

    /// Runs `body` as the loop's own callbacks run theirs (see `runIOCallback`), without counting
    /// it as I/O: for the loop's reports about itself (a stall).
    func runAsCallback(_ body: () -> Void) {
        confirmLoopThread()
        if isInCallback {
            body()
            return
        }
        isInCallback = true
        defer { isInCallback = false }
        body()
        afterCallback()
    }

    func onIdle() {
        confirmLoopThread()
        isInCallback = true
        defer { isInCallback = false }
        if timersDue { fireDueTimers() }
        drainPosted()
        if chunkedLoops.isPending { runChunk() }
        afterCallback()
    }

    /// The last callback before libuv polls. With the idle handle active the poll does not block,
    /// and the idle phase drains next turn. Otherwise, posts that arrived while the loop was awake
    /// (they did not wake it) run now, once; if more arrived meanwhile, the idle handle makes the
    /// poll non-blocking. Only a queue seen empty lets the poll block, and re-arms the wake-up.
    /// Then, with the turn's work done, it ends the turn's accounting (`Loop.metrics()`).
    func onPrepare() {
        confirmLoopThread()
        if !inboxes.unsettled.isEmpty { settleInboxes() }
        if postsWaitBeforeABlockingPoll() {
            isInCallback = true
            defer { isInCallback = false }
            drainPosted()
            afterCallback()
            if postsWaitBeforeABlockingPoll() { requestDrain() }
        }
        recordTurnEnd()
    }

    /// The first callback of an attached loop, whichever phase it comes in: everything UVLoop keeps
    /// for the loop's thread (timers, `LoopBound` values, inline `invoke`) belongs to the thread
    /// that attached it, so a loop that another thread runs must stop here, before any of UVLoop's
    /// work runs on that thread. Every libuv callback of the engine starts with this check.
    /// It also stops a forked child's loop that was not reset for the child (`Loop.afterFork()`),
    /// before the poll that would share the parent's epoll instance.
    @inline(__always)
    private func confirmLoopThread() {
        if let attaching = unconfirmedThread { confirmLoopThread(attaching) }
        if _slowPath(forkState.isStale) { stopInForkedChild("a turn of the loop") }
        noteTurnStart()
    }

    private func confirmLoopThread(_ attaching: ThreadIdentity) {
        misusePrecondition(
            ThreadIdentity.current == attaching,
            "UVLoop: this uv_loop_t was attached (Loop.attach or uvloop_attach) on one thread and is run by another; attach it on the thread that calls uv_run")
        unconfirmedThread = nil
    }

    /// Whether the coming poll may block (handles open, idle handle off) while posts from other
    /// threads wait. When it may block and none wait, this re-arms the wake-up, in the lock that
    /// saw the queue empty.
    func postsWaitBeforeABlockingPoll() -> Bool {
        !lifecycle.handlesClosed && !idle.isActive && lifecycle.rearmWakeUnlessPending()
    }

    func onCheck() {
        confirmLoopThread()
        isInCallback = true
        defer { isInCallback = false }
        // Work posted during the poll phase, and work the loop's own thread posted this turn,
        // runs before the next-iteration snapshot (as "Order and threading guarantees" in the
        // Posting article says).
        if drainRequested || hasOwnOrBatchedJobs { drainPosted() }
        runNextIterationSnapshot()
        afterCallback()
    }

    /// The wake timer fired: it no longer keeps the loop alive (`rearm()` arms it again for the
    /// next deadline after the burst). Timers fire only from the idle phase, never here, so that
    /// one turn fires one budget of them however the owner runs the loop.
    func onWakeTimer() {
        confirmLoopThread()
        disarm()
        timersDue = true
        startIdle()
    }

    /// Handles stop and shutdown requests, then keeps the idle and check handles active exactly
    /// while they have something to do.
    func afterCallback() {
        if handleStopAndEnding() { updateHandles() }
    }

    /// What a callback's end does about the loop's life: finishes an ending under way, or stops
    /// the loop if asked. Returns whether the loop goes on, with handles to keep up to date.
    @inline(__always)
    private func handleStopAndEnding() -> Bool {
        if lifecycle.handlesClosed { return false }
        // Atomics first, not the lock: a producer woken by the work just run (an `invoke` caller)
        // posts again at once, and would find the lock taken here.
        if lifecycle.isEnding {
            finishEnding()
            return false
        }
        if lifecycle.takeStopRequest() { native.stop() }
        return true
    }

    func updateHandles() {
        let wantsCheck = !nextIteration.isEmpty
        if wantsCheck != check.isActive { wantsCheck ? check.start() : check.stop() }
        var wantsIdle = wantsCheck || drainRequested || hasOwnOrBatchedJobs || timersDue
            || chunkedLoops.isPending || inboxes.isBusy || (busyPollUntil != 0 && isBusyPolling)   // no call while no window is open
        // Without the idle handle the next poll may block, and an owner that polls the loop's
        // backend descriptor itself may wait on it before the prepare phase comes: posts from
        // other threads must then wake it. Re-arm their wake-up now, in the lock that sees the
        // queue empty, or keep the poll non-blocking for the posts that wait.
        if !wantsIdle && lifecycle.rearmWakeUnlessPending() {
            drainRequested = true
            wantsIdle = true
        }
        if wantsIdle != idle.isActive { wantsIdle ? idle.start() : idle.stop() }
        if timers.hasUnreferenced || timers.idleUnreferenced { updateIdleReference() }
    }

    /// Starts the idle handle unless it is active already, and never once the handles are closed:
    /// a verb called on a loop that is shut down or detached (`stop()`, advancing a manual clock)
    /// must not touch a handle that libuv has freed.
    @inline(__always)
    func startIdle() {
        if !lifecycle.handlesClosed && !idle.isActive { idle.start() }
        if timers.idleUnreferenced { updateIdleReference() }
    }

    /// Whether posted, next-iteration or chunked work is still waiting to run (timers aside).
    var hasQueuedWork: Bool {
        hasOwnOrBatchedJobs || !queue.isEmpty || !nextIteration.isEmpty || chunkedLoops.isPending
    }

    /// Whether something could run now without waiting for I/O or time.
    var hasReadyWork: Bool {
        hasQueuedWork || drainRequested || timersDue || hasDueTimers(at: now)
            || inboxes.hasWaiting
    }
}
