import CLibUV

/// Everything a loop owns that only its thread touches: the libuv handles, the consumer side of
/// the post queue, the next-iteration queue, the timers and the clock.
///
/// One turn of libuv 1.44 runs: timers, pending, idle, prepare, poll, check, closing. UVLoop uses:
/// - the wake timer (timer phase): marks timers due and starts the idle handle, which fires them;
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
/// - the check handle (check phase): drains work the loop thread posted during poll, then runs
///   the next-iteration snapshot.
final class LoopEngine {
    let native: NativeLoop
    let queue: PostQueue
    let clockSource: LoopClockSource
    let postBudget: Int

    private(set) var wake: WakeHandle!
    private(set) var idle: IdleHandle!
    private(set) var check: CheckHandle!
    private var prepare: PrepareHandle!
    private var wakeTimer: WakeTimer!
    let threadPool: ThreadPoolQueue

    /// The consumer's batch: swapped out of the post queue, run from `batchIndex` on.
    private var batch: [Job] = []
    private var batchIndex = 0
    /// A drain must happen without waiting for the wake handle (a loop-thread executor job
    /// found the wake flag clear, or a drain consumed a wake-up without looking at the queue).
    private var drainRequested = false

    /// Work the loop's own thread queued while the loop accepts work (posts and executor jobs),
    /// in queuing order. Only this thread touches it, so it needs no lock and no wake-up; it is
    /// behind a pointer for the same reason as `timerStorage` (one exclusivity check per post).
    private let ownJobs: UnsafeMutablePointer<JobRing> = {
        let storage = UnsafeMutablePointer<JobRing>.allocate(capacity: 1)
        storage.initialize(to: JobRing())
        return storage
    }()
    /// Until when (monotonic nanoseconds) the loop polls without blocking, after a drain that ran
    /// work (`Loop.busyPoll`); zero when it does not.
    private var busyPollUntil: UInt64 = 0

    /// Stored as `Job`s, not as bare closures: an array of closures keeps them at the generic
    /// abstraction, and converting each one to it allocates a thunk (a second allocation per post).
    private var nextIteration: [Job] = []
    private var nextIterationSnapshot: [Job] = []

    /// The timer queue lives behind a pointer: as a stored property of this class, every
    /// mutation would pay a run-time exclusivity check (callgrind: about 300 instructions per
    /// schedule+cancel). `TimerQueue`'s methods never call user code, so accesses cannot overlap.
    private let timerStorage: UnsafeMutablePointer<TimerQueue>

    var timers: TimerQueue {
        _read { yield timerStorage.pointee }
        _modify { yield &timerStorage.pointee }
    }
    /// The deadline the wake timer is armed for, if armed.
    private var armedDeadline: UInt64?
    /// The earliest timer was due when last looked at: fire it from the idle phase.
    private var timersDue = false
    /// A burst that the budget cut short: the clock reading and sequence limit it began with.
    /// The next turn fires its rest (as part of a new burst); a shutdown fires it first, as it
    /// would have run in the same callback without the budget.
    private var unfinishedBurst: (now: UInt64, sequenceLimit: UInt64)?
    var manualNow: UInt64 = 0

    /// Pending chunked loops; while any is pending, the idle handle stays active.
    let chunkedLoops = ChunkScheduler()

    /// Set while a thread is inside `uv_run` for this loop (through UVLoop or its C owner).
    var isRunning = false
    private(set) var handlesClosed = false
    /// One of this state's libuv callbacks is on the stack. A detach requested inside one waits
    /// for it to return (`afterCallback`): the callback may hold work it took out of the loop's
    /// structures (the rest of a drained batch, a next-iteration snapshot, a repeating timer
    /// between runs), and a shutdown run in its middle would miss that work and then see it
    /// restart handles already closed.
    private(set) var isInCallback = false
    /// The open inboxes: how to close each (at shutdown and detach), and whether messages may
    /// wait in it (see `InboxConsumer.hasWaiting`).
    var inboxes: [ObjectIdentifier: (close: () -> Void, hasWaiting: () -> Bool)] = [:]
    /// The loop's executor identities, which jobs run on; set once the `Loop` exists.
    var executors: LoopExecutorRefs?

    deinit {
        timerStorage.deinitialize(count: 1)
        timerStorage.deallocate()
        ownJobs.deinitialize(count: 1)
        ownJobs.deallocate()
    }

    init(
        native: NativeLoop, queue: PostQueue, clock: LoopClockSource, postBudget: Int, timerSlots: TimerSlots
    ) throws(LoopError) {
        timerStorage = .allocate(capacity: 1)
        timerStorage.initialize(to: TimerQueue(shared: timerSlots))
        self.native = native
        self.queue = queue
        self.clockSource = clock
        self.postBudget = postBudget
        self.threadPool = ThreadPoolQueue(loop: native)
        wake = try WakeHandle(loop: native) { [unowned self] in self.onWake() }
        idle = try IdleHandle(loop: native) { [unowned self] in self.onIdle() }
        check = try CheckHandle(loop: native) { [unowned self] in self.onCheck() }
        prepare = try PrepareHandle(loop: native) { [unowned self] in self.onPrepare() }
        wakeTimer = try WakeTimer(loop: native) { [unowned self] in self.onWakeTimer() }
        if !native.isOwned {
            // On a loop that C code owns, waiting for posts must not keep the owner's uv_run alive.
            wake.unref()
        }
    }

    // MARK: the clock

    @inline(__always)
    var now: UInt64 { clockSource == .manual ? manualNow : monotonicNanoseconds() }

    // MARK: libuv callbacks

    private func onWake() {
        isInCallback = true
        defer { isInCallback = false }
        drainPosted()
        afterCallback()
    }

    private func onIdle() {
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
    private func onPrepare() {
        guard postsWaitBeforeABlockingPoll() else { return }
        isInCallback = true
        defer { isInCallback = false }
        drainPosted()
        afterCallback()
        if postsWaitBeforeABlockingPoll() { requestDrain() }
    }

    /// Whether the coming poll may block (handles open, idle handle off) while posts from other
    /// threads wait. When it may block and none wait, this re-arms the wake-up, in the lock that
    /// saw the queue empty.
    private func postsWaitBeforeABlockingPoll() -> Bool {
        !handlesClosed && !idle.isActive && queue.rearmWakeUnlessPending()
    }

    private func onCheck() {
        isInCallback = true
        defer { isInCallback = false }
        // Work posted during the poll phase runs before next-iteration work queued alongside it.
        if drainRequested { drainPosted() }
        runNextIterationSnapshot()
        afterCallback()
    }

    /// Timers fire only from the idle phase, never here, so that one turn fires one budget of
    /// them wherever libuv puts its timer phase: libuv 1.44 runs timers before the idle phase, and
    /// again after the check phase under `UV_RUN_ONCE` (later versions, after every poll). Fired
    /// here, a burst's first budget and a second one from the idle phase could share a turn.
    private func onWakeTimer() {
        armedDeadline = nil
        timersDue = true
        if !idle.isActive { idle.start() }
    }

    /// Handles stop and shutdown requests, then keeps the idle and check handles active exactly
    /// while they have something to do.
    private func afterCallback() {
        if handlesClosed { return }
        // Atomics, not the queue lock: a producer woken by the work just run (an `invoke` caller)
        // posts again at once, and would find the lock taken here.
        if !queue.isOpen, queue.phase == .shuttingDown {
            shutDownNow(finalPhase: native.isOwned ? .closed : .detached)
            return
        }
        if queue.stopRequested.load(ordering: .relaxed),
           queue.stopRequested.exchange(false, ordering: .acquiring) {
            native.stop()
        }
        updateHandles()
    }

    private func updateHandles() {
        let wantsCheck = !nextIteration.isEmpty
        if wantsCheck != check.isActive { wantsCheck ? check.start() : check.stop() }
        let wantsIdle = wantsCheck || drainRequested || hasOwnOrBatchedJobs || timersDue
            || chunkedLoops.isPending || isBusyPolling
        if wantsIdle != idle.isActive { wantsIdle ? idle.start() : idle.stop() }
    }

    // MARK: posted work

    /// Whether the busy-poll window that the last drain with work opened is still open.
    private var isBusyPolling: Bool {
        guard busyPollUntil != 0 else { return false }
        if monotonicNanoseconds() < busyPollUntil { return true }
        busyPollUntil = 0
        return false
    }

    /// A drain ran work: open the busy-poll window, if the loop has one.
    private func openBusyPollWindow() {
        let window = queue.busyPollNanoseconds.load(ordering: .relaxed)
        guard window > 0, clockSource == .system else { return }
        busyPollUntil = monotonicNanoseconds().addingClamped(window)
    }

    /// The loop's own thread asked for something the next drain handles (a stop, a shutdown while
    /// running): make sure that drain happens without blocking.
    @inline(__always)
    func requestDrain() {
        drainRequested = true
        if !idle.isActive { idle.start() }
    }

    /// Queues a job from the loop's own thread (the caller checked that the loop accepts work).
    /// The idle handle makes the next poll non-blocking so that the job runs this turn or the next.
    @inline(__always)
    func appendOwn(_ job: consuming Job) {
        ownJobs.pointee.append(job)
        if !idle.isActive { idle.start() }
    }

    /// `appendOwn`, moving the job out of `job` (see `Job.take`).
    @inline(__always)
    func appendOwn(taking job: inout Job) {
        appendOwn(Job.take(&job))
    }

    /// Jobs queued by the loop's thread or left over from a drain's snapshot.
    private var hasOwnOrBatchedJobs: Bool {
        batchIndex < batch.count || !ownJobs.pointee.isEmpty
    }

    /// Runs at most `postBudget` queued jobs: those posted from other threads, then those the
    /// loop's thread queued. A snapshot of both is taken only when the previous one is used up,
    /// and at most once per call, so work queued while draining waits for a later drain and a job
    /// that re-posts itself forever cannot keep the loop from polling.
    func drainPosted(budget: Int? = nil) {
        let initialBudget = budget ?? postBudget
        var remaining = initialBudget
        var tookSnapshot = false
        // Work on local copies: stored properties of this class touched across the call into a
        // job would each cost a run-time exclusivity check per job (about 60 instructions), and a
        // job may drain re-entrantly (a shutdown from inside a posted closure).
        var jobs: [Job] = []
        swap(&jobs, &batch)
        var index = batchIndex
        // The own ring is reached through its pointer on every use, never copied to a local: a
        // job that drains re-entrantly takes from the same snapshot.
        let own = ownJobs
        while remaining > 0 {
            if index < jobs.count {
                let job = Job.take(&jobs[index])
                index += 1
                remaining -= 1
                run(job)
            } else if own.pointee.hasSnapshotJobs {
                remaining -= 1
                run(own.pointee.takeFromSnapshot())
            } else {
                if tookSnapshot { break }
                jobs.removeAll(keepingCapacity: true)
                index = 0
                drainRequested = false
                queue.takeAll(into: &jobs)
                own.pointee.markSnapshot()
                tookSnapshot = true
                if jobs.isEmpty && !own.pointee.hasSnapshotJobs { break }
            }
        }
        swap(&jobs, &batch)
        batchIndex = index
        if remaining < initialBudget { openBusyPollWindow() }
        if !tookSnapshot {
            // This call consumed a wake-up without looking at the queue: whatever that wake-up
            // announced must be picked up by a later drain.
            drainRequested = true
        }
    }

    @inline(__always)
    private func run(_ job: consuming Job) {
        switch consume job {
        case .run(let work): work()
        case .nextIteration(let work): appendNextIteration(.run(work))
        case .threadPoolWork(let job): threadPool.submit(job)
        case .actorJob(let job): job.runSynchronously(on: executors!.serial)
        case .taskJob(let job): job.runSynchronously(on: executors!.task)
        case .empty: break
        }
    }

    /// Whether posted, next-iteration or chunked work is still waiting to run (timers aside).
    var hasQueuedWork: Bool {
        hasOwnOrBatchedJobs || !queue.isEmpty || !nextIteration.isEmpty || chunkedLoops.isPending
    }

    /// Whether something could run now without waiting for I/O or time.
    var hasReadyWork: Bool {
        hasQueuedWork || drainRequested || timersDue || timers.hasDue(at: now)
            || inboxes.values.contains { $0.hasWaiting() }
    }

    // MARK: chunked loops

    /// Queues a chunked loop started on (or posted to) the loop's thread; it begins in the next
    /// idle phase.
    func admitChunkedLoop(_ run: ChunkedLoopRun) {
        chunkedLoops.admit(run)
        if !idle.isActive { idle.start() }
    }

    /// Runs one chunk. A chunk stops early when a timer comes due; that timer then fires in the
    /// next iteration's idle phase, after one poll for I/O, rather than at the wake timer's next
    /// millisecond tick.
    private func runChunk() {
        chunkedLoops.runTurn(self)
        if timers.hasDue(at: now) { timersDue = true }
    }

    // MARK: next iteration

    /// Queues `job` (a `.run`) for the next iteration's check phase.
    func appendNextIteration(_ job: consuming Job) {
        nextIteration.append(job)
        if !check.isActive { check.start() }
        if !idle.isActive { idle.start() }
    }

    private func runNextIterationSnapshot() {
        var snapshot: [Job] = []
        swap(&snapshot, &nextIterationSnapshot)
        swap(&nextIteration, &snapshot)
        var index = 0
        while index < snapshot.count {
            let job = Job.take(&snapshot[index])
            index += 1
            run(job)
        }
        snapshot.removeAll(keepingCapacity: true)
        swap(&snapshot, &nextIterationSnapshot)
    }

    // MARK: timers

    /// Schedules timer `id` (pending, allocated on any thread); `now` is the clock reading the
    /// caller resolved `deadline` against. A timer cancelled on its way here is dropped; one fired
    /// on its way (see `TimerQueue.insert`) runs now.
    func schedule(_ id: UInt64, deadline: UInt64, now: UInt64, repetition: TimerRepetition, work: consuming TimerWork) {
        if let ended = timers.insert(id, deadline: deadline, now: now, repetition: repetition, work: work) {
            // Fired on its way here: it runs now, as it arrives. Cancelled: dropped here.
            if ended.wasFired { run(ended.work) }
            return
        }
        noteScheduled(deadline, now: now)
    }

    /// Allocates a timer and schedules it `delay` from now; returns its id.
    func scheduleNew(after delay: UInt64, repetition: TimerRepetition, work: consuming TimerWork) -> UInt64 {
        let now = self.now
        let deadline = now.addingClamped(delay)
        let id = timers.schedule(deadline: deadline, now: now, repetition: repetition, work: work)
        noteScheduled(deadline, now: now)
        return id
    }

    /// Makes sure the loop wakes up for a timer just scheduled for `deadline`.
    @inline(__always)
    private func noteScheduled(_ deadline: UInt64, now: UInt64) {
        if deadline <= now {
            timersDue = true
            if !idle.isActive { idle.start() }
        } else if armedDeadline.map({ deadline < $0 }) ?? true {
            arm(for: deadline)
        }
    }

    /// Removes a timer that was cancelled; drops its work here, on the loop's thread. `current`:
    /// it was cancelled on this thread just now (see `TimerQueue.remove`).
    func discard(_ id: UInt64, current: Bool) {
        _ = timers.remove(id, current: current)
    }

    /// Fires a pending timer now (the loop thread's half of `LoopTimer.fire()`).
    func fireNow(_ timer: LoopTimer) -> Bool {
        guard timers.shared.finish(timer.id, as: TimerSlots.fired) else { return false }
        // Inside its own callback a repeating timer is not scheduled: the firing loop frees it
        // afterwards; run a copy of the work.
        if let work = timers.remove(timer.id, current: true) ?? timers.work(at: TimerSlots.slot(timer.id)) { run(work) }
        return true
    }

    /// Fires, in (deadline, schedule order), the timers due now that were scheduled before this
    /// call began, at most `postBudget` of them; timers scheduled by these callbacks wait for a
    /// later turn even with a zero delay. When the budget runs out, the rest of the burst stays
    /// queued in order and `rearm()` finds it due: the idle handle fires it next turn, after a
    /// poll for I/O that does not block.
    func fireDueTimers() {
        fireBurst(now: now, sequenceLimit: timers.nextSequence, budget: postBudget)
    }

    /// Fires, in order and at most `budget` of them, the timers due at `now` with a schedule
    /// sequence below `sequenceLimit`.
    private func fireBurst(now: UInt64, sequenceLimit limit: UInt64, budget: Int) {
        timersDue = false
        unfinishedBurst = nil
        let slots = timers.shared
        var remaining = budget
        while remaining > 0, let entry = timers.popDue(now: now, sequenceLimit: limit) {
            remaining -= 1
            let slot = entry.slot
            let repetition = timers.repetition(at: slot)
            if !repetition.isRepeating {
                let fired = slots.finish(slot: slot, as: TimerSlots.fired)
                // Released before it runs, so that the callback may reuse the slot.
                let work = timers.release(slot: slot)
                if fired, let work { run(work) }
            } else {
                guard slots.isPending(slot: slot), let work = timers.work(at: slot) else {
                    _ = timers.release(slot: slot)
                    continue
                }
                run(work)
                if slots.isPending(slot: slot) {
                    timers.reinsert(slot: slot, deadline: repetition.nextDeadline(after: entry.deadline, now: self.now))
                } else {
                    _ = timers.release(slot: slot)
                }
            }
        }
        if remaining == 0 { unfinishedBurst = (now, limit) }
        rearm()
    }

    private func run(_ work: TimerWork) {
        switch work {
        case .closure(let body): body()
        case .sleeper(let waiter): waiter.resume(with: .success(()))
        case .ticker(let ticker): ticker.tick(at: LoopInstant(nanoseconds: now))
        }
    }

    /// Points the wake timer (or, when already due, the idle handle) at the earliest deadline.
    /// Never arms the uv timer with a zero timeout: libuv 1.44 busy-loops on that from a timer callback.
    private func rearm() {
        guard let deadline = timers.deadlineBound else {
            if armedDeadline != nil { wakeTimer.stop(); armedDeadline = nil }
            return
        }
        if deadline <= now {
            timersDue = true
            if !idle.isActive { idle.start() }
        } else if armedDeadline != deadline {
            arm(for: deadline)
        }
    }

    private func arm(for deadline: UInt64) {
        guard clockSource == .system else { return }
        // uv timers count whole milliseconds of uv_now; round up so a timer never fires early.
        let dueMilliseconds = deadline / 1_000_000 + (deadline % 1_000_000 == 0 ? 0 : 1)
        let loopMilliseconds = uv_now(native.pointer)
        let delay = dueMilliseconds > loopMilliseconds ? dueMilliseconds - loopMilliseconds : 1
        wakeTimer.start(milliseconds: delay)
        armedDeadline = deadline
    }

    /// Moves the manual clock (tests only); the caller then runs the loop so due timers fire.
    func setManualNow(_ value: UInt64) {
        precondition(clockSource == .manual, "UVLoop: only a loop created with clock: .manual can be advanced")
        if value > manualNow { manualNow = value }
        if timers.hasDue(at: manualNow) {
            timersDue = true
            if !idle.isActive { idle.start() }
        }
    }

    // MARK: shutdown and detach

    /// Runs everything posted before shutdown began, cancels pending timers, closes every handle.
    /// Work posted after shutdown began was refused by the queue. Executor jobs are still admitted
    /// while shutting down (a cancelled sleeper's task must get back to its actor): they run here,
    /// and the loop closes only in a lock that sees none left.
    /// `onLoopThread: false` (a loop released on another thread, with nothing queued): a burst the
    /// budget cut short is cancelled with the other timers, since no timer may run off the loop's
    /// thread.
    func shutDownNow(finalPhase: LoopPhase = .closed, onLoopThread: Bool = true) {
        guard !handlesClosed else { return }
        // Timers already due in a burst the budget cut short fire before the shutdown cancels
        // the rest: the burst is part of the turn that requested it.
        if onLoopThread, let burst = unfinishedBurst {
            fireBurst(now: burst.now, sequenceLimit: burst.sequenceLimit, budget: .max)
        }
        var released = false
        repeat {
            while true {
                drainPosted(budget: .max)
                if hasOwnOrBatchedJobs || !queue.isEmpty { continue }
                if nextIteration.isEmpty { break }
                runNextIterationSnapshot()
            }
            if !released {
                released = true
                releaseInboxesAndTimers()
            }
            // Closing inboxes and timers may have queued jobs (a sleeper's task resuming): the
            // queue closes only once this thread's jobs are drained too.
        } while hasOwnOrBatchedJobs || !queue.close(as: finalPhase)
        // No waker can register any more (the phase refuses work); let those in flight finish.
        queue.waitForWakers()
        wake.close()
        idle.close()
        check.close()
        prepare.close()
        wakeTimer.close()
        handlesClosed = true
    }

    private func releaseInboxesAndTimers() {
        // Chunked loops stop here: their completions report the shutdown and what was processed.
        chunkedLoops.stopAll()
        for inbox in inboxes.values { inbox.close() }
        inboxes.removeAll()
        for (slot, work) in timers.removeAll() {
            guard timers.shared.finish(slot: slot, as: TimerSlots.cancelled) else { continue }
            switch work {
            case .sleeper(let waiter): waiter.resume(with: .failure(LoopError.shutDown))
            case .ticker(let ticker): ticker.finish()
            case .closure: break
            }
        }
    }
}

extension UInt64 {
    func addingClamped(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    func multipliedClamped(_ other: UInt64) -> UInt64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? .max : product
    }
}
