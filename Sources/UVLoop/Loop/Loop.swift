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

    // MARK: posting

    /// Runs `work` soon on the loop's thread; never inline, even when called on the loop's thread.
    ///
    /// Callable from any thread. Work posted by one thread runs in posting order. A post wakes
    /// the loop only when it may be asleep: posts that arrive while it is awake cost no wake-up.
    /// Throws `LoopError.shutDown` (or `.detached`) once the loop has begun shutting down: the
    /// work was not queued and will not run.
    @inline(__always)
    public func post(_ work: consuming @escaping @Sendable () -> Void) throws(LoopError) {
        try enqueue(.run(consume work))
    }

    /// How long the loop keeps polling without blocking, after a drain that ran work, before it
    /// sleeps in the kernel. Zero (the default) never spins. Set it with `setBusyPoll(_:)`.
    public var busyPoll: Duration {
        .nanoseconds(Int64(clamping: queue.busyPollNanoseconds.load(ordering: .relaxed)))
    }

    /// Sets `busyPoll`: after a drain that ran work, the loop keeps polling without blocking for
    /// up to `window` before it sleeps in the kernel.
    ///
    /// Ping-pong traffic, such as a task on another executor awaiting a loop actor and coming
    /// back, then finds the loop awake instead of paying for a kernel wake-up on every trip, at the
    /// cost of CPU while the loop polls (each poll is one non-blocking `epoll_wait`). An idle loop
    /// still sleeps: polling only follows work. Ignored on a loop with a manual clock. Callable
    /// from any thread; the loop's thread uses the new value from its next drain on.
    /// - Throws: `LoopError.invalidArgument` for a negative window.
    public func setBusyPoll(_ window: Duration) throws(LoopError) {
        guard window >= .zero else {
            throw LoopError.invalidArgument("busy-poll window must not be negative (got \(window)); use .zero to turn it off")
        }
        queue.busyPollNanoseconds.store(UInt64(clamping: window.saturatingNanoseconds), ordering: .relaxed)
    }

    /// Queues `work` to run on the next loop iteration, after the loop has polled for I/O.
    ///
    /// From the loop's thread, work queued while the current next-iteration snapshot runs waits
    /// for the following turn; from another thread it goes through the post queue (keeping that
    /// thread's order) and joins the next-iteration queue when the loop drains it. While this queue
    /// is not empty the loop does not block in poll. Throws like `post`.
    public func postNextIteration(_ work: consuming @escaping @Sendable () -> Void) throws(LoopError) {
        if isOnLoopThread {
            guard queue.isOpen else { throw queue.refusal }
            var job = Job.run(consume work)
            confined.withValue { $0.appendNextIteration(Job.take(&job)) }
        } else {
            try enqueue(.nextIteration(consume work))
        }
    }

    /// Queues `job`: from another thread through the post queue (one lock, and a wake-up only if
    /// the loop may be asleep); from the loop's own thread into the loop-confined queue, with no
    /// lock at all.
    /// The job is moved, never copied, into the queue: a copy would retain the closure's context
    /// and release it again, two atomic operations per post.
    @inline(__always)
    func enqueue(_ job: consuming Job) throws(LoopError) {
        if isOnLoopThread {
            guard queue.isOpen else { throw queue.refusal }
            confined.withValue { $0.appendOwn(taking: &job) }
        } else {
            try queue.append(taking: &job, waking: wake)
        }
    }

    /// Runs `work` on the loop's thread and returns its value (or rethrows its error).
    ///
    /// On the loop's thread it runs inline, at once, so it never deadlocks. From another thread it
    /// is posted (ordered with that thread's other posts) and the calling thread blocks until it has
    /// run. Throws `LoopError.shutDown` if the loop no longer accepts work.
    public func invoke<T: Sendable>(_ work: @escaping @Sendable () throws -> T) throws -> T {
        if isOnLoopThread { return try work() }
        let handoff = ThreadHandoff<Result<T, any Error>>()
        try enqueue(.run { handoff.deliver(Result { try work() }) })
        return try handoff.take().get()
    }

    /// Runs `work`, which cannot throw, on the loop's thread and returns its value; the only error
    /// is the loop's own.
    ///
    /// Inline on the loop's thread, otherwise posted and waited for, like the throwing `invoke`.
    /// - Throws: ``LoopError/shutDown`` (or ``LoopError/detached``) if the loop no longer accepts
    ///   work; `work` did not run.
    public func invoke<T: Sendable>(_ work: @escaping @Sendable () -> T) throws(LoopError) -> T {
        if isOnLoopThread { return work() }
        let handoff = ThreadHandoff<T>()
        try enqueue(.run { handoff.deliver(work()) })
        return handoff.take()
    }

    /// Runs `work` on the loop's thread and returns its value, suspending (not blocking) the caller.
    ///
    /// Inline when already on the loop's thread. It starts on the caller's executor
    /// (`nonisolated(nonsending)`), so from an actor on this loop it runs inline too, with no hop.
    /// Throws `LoopError.shutDown` if the loop no longer accepts work.
    public nonisolated(nonsending) func invoke<T: Sendable>(
        _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        if isOnLoopThread { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            do {
                try enqueue(.run { continuation.resume(with: Result { try work() }) })
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    // MARK: timers

    /// Runs `work` on the loop's thread once `delay` has passed on the loop's clock.
    ///
    /// Callable from any thread; returns a handle to cancel it, fire it early or ask whether it is
    /// pending. Due timers fire in (deadline, schedule order). A negative delay counts as zero; a
    /// delay too large to represent is clamped to the end of time. A timer scheduled with zero delay
    /// from inside a timer callback fires on the next turn, never within the current one.
    ///
    /// Resolution: the loop sleeps on a libuv timer with 1 ms granularity, rounded up, so a timer
    /// never fires before its deadline and, on an idle loop, usually within about 1 ms after it.
    /// Under the manual clock, timers fire exactly at their deadlines as the test advances time.
    ///
    /// Throws `LoopError.shutDown` once the loop has begun shutting down.
    @discardableResult
    public func schedule(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) throws(LoopError) -> LoopTimer {
        try schedule(after: delay, repetition: .none, work: .closure(work))
    }

    /// Runs `work` on the loop's thread at `deadline` on the loop's clock (at once if it has passed).
    @discardableResult
    public func schedule(
        at deadline: LoopInstant, _ work: @escaping @Sendable () -> Void
    ) throws(LoopError) -> LoopTimer {
        let timer = makeTimer()
        try insert(timer, deadline: .absolute(deadline.nanoseconds), repetition: .none, work: .closure(work))
        return timer
    }

    /// Runs `work` on the loop's thread every `interval`, the first time after `delay`
    /// (default: one interval), until the returned timer is cancelled or fired.
    ///
    /// - Parameter policy: `.fixedRate` keeps ticks on a grid of `interval`; `.fixedDelay` waits
    ///   `interval` after each callback returns. See `LoopTimer.RepeatPolicy`.
    /// - Throws: `LoopError.invalidArgument` when `interval` is shorter than 1 nanosecond.
    @discardableResult
    public func scheduleRepeating(
        every interval: Duration, after delay: Duration? = nil, policy: LoopTimer.RepeatPolicy = .fixedRate,
        _ work: @escaping @Sendable () -> Void
    ) throws(LoopError) -> LoopTimer {
        let nanoseconds = interval.saturatingNanoseconds
        guard nanoseconds > 0 else {
            throw LoopError.invalidArgument("a repeating timer's interval must be at least 1 nanosecond (got \(interval))")
        }
        let repetition = TimerRepetition(interval: UInt64(nanoseconds), policy: policy)
        return try schedule(after: delay ?? interval, repetition: repetition, work: .closure(work))
    }

    /// Suspends the calling task for `duration` on the loop's clock.
    ///
    /// Cancelling the task cancels the timer at once and throws `CancellationError`; a loop that
    /// shuts down first throws `LoopError.shutDown`. It runs on the caller's actor (`isolation`): from
    /// an actor on this loop the timer is scheduled at once, on the loop's thread, without a hop.
    public func sleep(for duration: Duration, isolation: isolated (any Actor)? = #isolation) async throws {
        try Task.checkCancellation()
        let waiter = SleepWaiter(timer: makeTimer())
        try await withTaskCancellationHandler {
            // Capturing `isolation` keeps this closure on the caller's actor, so that from an
            // actor on this loop the timer is scheduled right here, on the loop's thread.
            _ = isolation
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Arm before scheduling, so the timer can only fire once the waiter knows it.
                if !waiter.arm(continuation) {
                    abandon(waiter.timer)
                    continuation.resume(throwing: CancellationError())
                    return
                }
                do {
                    try insert(waiter.timer, after: duration, repetition: .none, work: .sleeper(waiter))
                } catch {
                    waiter.resume(with: .failure(error))
                }
            }
        } onCancel: {
            waiter.cancel()
        }
    }

    /// Schedules a new timer; on the loop's thread without a detour through `makeTimer`.
    private func schedule(
        after delay: Duration, repetition: TimerRepetition, work: TimerWork
    ) throws(LoopError) -> LoopTimer {
        let nanoseconds = UInt64(clamping: max(0, delay.saturatingNanoseconds))
        guard isOnLoopThread else {
            let timer = LoopTimer(loop: self, id: timerSlots.allocate())
            try insertFromOtherThread(timer, deadline: .after(nanoseconds), repetition: repetition, work: work)
            return timer
        }
        guard queue.isOpen else { throw queue.refusal }
        let id = confined.withValue { $0.scheduleNew(after: nanoseconds, repetition: repetition, work: work) }
        return LoopTimer(loop: self, id: id)
    }

    /// A pending timer that is not scheduled yet: `insert` schedules it, `abandon` gives it up.
    func makeTimer() -> LoopTimer {
        LoopTimer(loop: self, id: isOnLoopThread ? confined.value.timers.allocate() : timerSlots.allocate())
    }

    /// Schedules a timer from `makeTimer()` to fire `delay` from now.
    func insert(_ timer: LoopTimer, after delay: Duration, repetition: TimerRepetition, work: TimerWork) throws(LoopError) {
        let nanoseconds = UInt64(clamping: max(0, delay.saturatingNanoseconds))
        try insert(timer, deadline: .after(nanoseconds), repetition: repetition, work: work)
    }

    /// When a timer is due: at an instant, or after a delay from "now".
    private enum Deadline: Sendable {
        case absolute(UInt64)
        case after(UInt64)

        func resolved(now: UInt64) -> UInt64 {
            switch self {
            case .absolute(let deadline): return deadline
            case .after(let delay): return now.addingClamped(delay)
            }
        }
    }

    /// Schedules a timer from `makeTimer()`: on the loop's thread at once, from another thread
    /// through a post. When the loop no longer accepts work the timer is abandoned (no longer
    /// pending) and the error thrown.
    private func insert(
        _ timer: LoopTimer, deadline: Deadline, repetition: TimerRepetition, work: TimerWork
    ) throws(LoopError) {
        guard isOnLoopThread else {
            try insertFromOtherThread(timer, deadline: deadline, repetition: repetition, work: work)
            return
        }
        guard queue.isOpen else {
            abandon(timer)
            throw queue.refusal
        }
        let state = confined.value
        let now = state.now
        state.schedule(timer.id, deadline: deadline.resolved(now: now), now: now, repetition: repetition, work: work)
    }

    /// A delay is measured from the call on the system clock, and from when the loop receives it
    /// on a manual clock (which only the loop's thread may read).
    private func insertFromOtherThread(
        _ timer: LoopTimer, deadline: Deadline, repetition: TimerRepetition, work: TimerWork
    ) throws(LoopError) {
        var deadline = deadline
        if case .after = deadline, clockSource == .system {
            deadline = .absolute(deadline.resolved(now: monotonicNanoseconds()))
        }
        do {
            try enqueue(.run { [confined, deadline, id = timer.id] in
                let state = confined.value
                let now = state.now
                state.schedule(id, deadline: deadline.resolved(now: now), now: now, repetition: repetition, work: work)
            })
        } catch {
            abandon(timer)
            throw error
        }
    }

    /// Gives up a timer from `makeTimer()` that will not be scheduled: it is no longer pending and
    /// its slot is free again.
    func abandon(_ timer: LoopTimer) {
        _ = timerSlots.finish(timer.id, as: TimerSlots.cancelled)
        if isOnLoopThread {
            confined.value.timers.abandon(timer.id)
        } else {
            timerSlots.free(TimerSlots.slot(timer.id))
        }
    }

    func discard(_ timer: LoopTimer) {
        if isOnLoopThread {
            confined.withValue { $0.discard(timer.id, current: true) }
        } else {
            // Drop the closure on the loop's thread, never on the cancelling one. If the loop no
            // longer accepts work, shutdown has already released every pending timer's closure.
            try? enqueue(.run { [confined, id = timer.id] in confined.value.discard(id, current: false) })
        }
    }

    func fireNow(_ timer: LoopTimer) -> Bool {
        confined.value.fireNow(timer)
    }

    // MARK: running

    /// Runs the loop on its thread until `stop()` or `shutdown()`.
    ///
    /// Running out of work does not end `run()`: other threads may post at any time, and the loop
    /// sleeps in the kernel until they do. After `shutdown()` the loop is closed when `run()`
    /// returns.
    /// - Throws: `LoopError.notOnLoopThread` from another thread, `.alreadyRunning` when called
    ///   re-entrantly from a callback, `.adoptedLoop` on an adopted loop, `.shutDown` once closed.
    public func run() throws(LoopError) {
        let state = try enterRun("run()")
        defer { state.isRunning = false }
        native.runUntilStopped()
        finishIfShutDown(state)
    }

    /// Runs one loop iteration without blocking for I/O or time, on the loop's thread.
    ///
    /// - Returns: whether work is ready to run right away (posted work, due timers,
    ///   next-iteration work or a pending chunked loop), that is, whether another step would do
    ///   something.
    /// - Throws: like `run()`.
    @discardableResult
    public func runOnce() throws(LoopError) -> Bool {
        let state = try enterRun("runOnce()")
        defer { state.isRunning = false }
        native.runNoWait()
        finishIfShutDown(state)
        return !state.handlesClosed && state.hasReadyWork
    }

    /// Steps the loop until nothing is ready: no posted work, no due timer, no next-iteration
    /// work and no pending chunked loop (which runs to its end). Does not wait for timers that are
    /// not yet due.
    ///
    /// Work that re-posts itself forever keeps this from returning; `maxIterations` bounds it.
    /// - Returns: the number of iterations run.
    @discardableResult
    public func runUntilIdle(maxIterations: Int = .max) throws(LoopError) -> Int {
        var iterations = 0
        while iterations < maxIterations {
            iterations += 1
            if try !runOnce() { break }
        }
        return iterations
    }

    private func enterRun(_ operation: String) throws(LoopError) -> LoopEngine {
        guard isOnLoopThread else { throw .notOnLoopThread(operation: operation) }
        guard native.isOwned else { throw .adoptedLoop(operation: operation) }
        let state = confined.value
        guard !state.isRunning else { throw .alreadyRunning }
        guard !state.handlesClosed else { throw .shutDown }
        state.isRunning = true
        return state
    }

    private func finishIfShutDown(_ state: LoopEngine) {
        guard state.handlesClosed, native.isOwned else { return }
        let status = native.closeOwned()
        precondition(status == 0, "UVLoop: uv_loop_close failed after shutdown: \(LoopError.libuv(status, "uv_loop_close"))")
    }

    /// Makes `run()` return after the current turn; the loop stays open and keeps its work.
    /// Callable from any thread.
    public func stop() {
        let onLoopThread = isOnLoopThread
        let mustWake = queue.state.withLock { [queue] state -> Bool in
            guard state.phase == .open else { return false }
            queue.stopRequested.store(true, ordering: .releasing)
            if onLoopThread { return false }
            queue.wakersInFlight.add(1, ordering: .relaxed)
            return true
        }
        if mustWake { queue.sendRegisteredWake(wake) }
        if onLoopThread { confined.value.requestDrain() }
    }

    /// Shuts the loop down gracefully. Callable from any thread; idempotent.
    ///
    /// From now on posting throws `LoopError.shutDown`. The loop's thread then finishes a timer
    /// burst that `postBudget` had split across turns, runs everything posted before this call,
    /// cancels pending timers, closes every handle and closes the `uv_loop_t`: inside `run()`
    /// (which then returns), or right here when called on the loop's thread outside a turn, or
    /// at the next `runOnce()` of a stepped loop.
    /// An adopted loop cannot be shut down: `detach()` it.
    public func shutdown() {
        precondition(native.isOwned, "UVLoop: shutdown() on an adopted loop; call detach() on the owner's thread instead")
        let onLoopThread = isOnLoopThread
        let began = queue.state.withLock { [queue] state in
            guard state.phase == .open else { return false }
            state.phase = .shuttingDown
            queue.acceptsWork.store(false, ordering: .releasing)
            state.wakePending = true
            if !onLoopThread { queue.wakersInFlight.add(1, ordering: .relaxed) }
            return true
        }
        guard began else { return }
        if !onLoopThread { queue.sendRegisteredWake(wake) }
        if onLoopThread {
            let state = confined.value
            if state.isRunning {
                state.requestDrain()
            } else {
                state.shutDownNow()
                finishIfShutDown(state)
            }
        }
    }

    /// Detaches UVLoop from an adopted loop, on the owner's loop thread.
    ///
    /// Finishes a timer burst that `postBudget` had split across turns, runs everything posted so
    /// far, cancels pending timers, and closes UVLoop's handles. Their
    /// memory is released by libuv's close callbacks, so let the owner's loop turn once
    /// (`uv_run(loop, UV_RUN_NOWAIT)`) before `uv_loop_close`. Thread-pool work still in flight
    /// (operations' workers) is not waited for: each finish runs on a later turn of the owner's
    /// loop, and `uv_loop_close` returns `UV_EBUSY` until the last has run. From this call on,
    /// posting throws `LoopError.detached`.
    ///
    /// Called from inside one of UVLoop's callbacks on this loop (a posted closure, a timer,
    /// next-iteration work, a chunked loop's body or callbacks, an actor job), the detach
    /// finishes when that callback returns, within the same turn: work posted before the call
    /// still runs first, and the rest of the callback's own work too (the rest of a timer burst,
    /// even past `postBudget`, and of a chunk). Releasing the last reference to an attached
    /// `Loop` on the owner's thread detaches it the same way; releasing it on another thread
    /// stops the program.
    /// - Throws: `LoopError.notOnLoopThread` from another thread, `.detached` when already detached,
    ///   `.invalidArgument` for an owned loop (use `shutdown()`).
    public func detach() throws(LoopError) {
        guard !native.isOwned else {
            throw .invalidArgument("detach() is for adopted loops; call shutdown() on a loop UVLoop owns")
        }
        guard isOnLoopThread else { throw .notOnLoopThread(operation: "detach()") }
        let began = queue.state.withLock { state in
            guard state.phase == .open else { return false }
            state.phase = .shuttingDown
            queue.acceptsWork.store(false, ordering: .releasing)
            return true
        }
        guard began else { throw .detached }
        let state = confined.value
        // Inside one of the loop's callbacks the detach finishes when that callback returns.
        if state.isInCallback { return }
        state.shutDownNow(finalPhase: .detached)
    }

    /// Whether the loop still accepts work.
    public var isAcceptingWork: Bool { queue.isOpen }
}
