/// A `Loop` is a Swift concurrency executor: a `SerialExecutor` that actors can run on, and a
/// `TaskExecutor` that tasks can prefer.
///
/// ## Actors on the loop
/// An actor that returns the loop's executor runs every one of its methods on the loop's thread:
/// ```swift
/// actor Counter {
///     let loop: Loop
///     private(set) var value = 0
///     init(loop: Loop) { self.loop = loop }
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }
///     func increment() -> Int { value += 1; return value }
/// }
/// ```
/// The actor must keep its loop alive (a stored `let`), as above: the executor reference the
/// runtime holds is unowned.
///
/// ## Ordering
/// Jobs (steps of actors on the loop, and steps of tasks that prefer it) go through the same
/// first-in, first-out queue as `post`, with the same budget per drain: a job enqueued after a post
/// from the same thread runs after that post, and before a later one. A job enqueued on the loop's
/// own thread (for example by an actor method that starts a `Task`) is queued like a post and never
/// runs inline. Job priorities do not reorder the queue.
///
/// One actor on the loop calling another actor on the same loop continues on the loop's thread
/// without another trip through the queue, like calls between actors that share an executor.
///
/// ## Two identities
/// Actors see the loop through `unownedExecutor` (a companion object of the loop); tasks that
/// prefer the loop see the loop itself. Steps of actors run isolated to the loop; steps of tasks
/// that merely prefer it run as nonisolated code, on the loop's thread. Keeping them apart lets
/// each kind of call avoid an extra trip through the queue.
///
/// ## Isolation checks
/// `isIsolatingCurrentContext()` and `checkIsolated()` accept exactly the code that cannot run at
/// the same time as the loop's jobs: code on the loop's thread until the loop closes (posted work,
/// timer callbacks, code between the steps of a stepped loop), and, after it closed, the thread
/// running its late jobs (below). So `assumeIsolated` works for an actor on the loop (or
/// `MainLoopActor`) inside `post`, `invoke` and timer callbacks, and traps anywhere else.
///
/// ## After shutdown
/// `enqueue` cannot throw, and a job that never runs is a task that hangs forever, so the loop never
/// drops one:
/// - while shutting down, jobs are still queued, and the shutdown drain runs them on the loop's
///   thread; the loop closes only once a drain leaves none behind. Jobs that shutdown itself causes
///   on the loop's thread (work it drains starting tasks, tickers ending) run there;
/// - once the loop has closed (or been detached) there is no loop thread to run them, so a job runs
///   on the thread that enqueued it, still one at a time and in order: while one thread runs such
///   jobs, the others queue theirs for it. That covers actors used after shutdown, and a task that
///   shutdown resumed (a sleep failing with `LoopError.shutDown`) whose way back to the actor passes
///   through the global pool and arrives after the close. Such code is not on the loop's thread;
///   what needs the loop (`post`, `schedule`, `sleep`) throws `LoopError.shutDown`.
///
/// SwiftNIO, by contrast, prints an error and drops a job enqueued on a shut-down event loop (or
/// traps, in its strict mode), which leaves the task suspended forever.
extension Loop: SerialExecutor, TaskExecutor {
    /// Queues a step of a task that prefers this loop as its task executor; the runtime calls it.
    /// Callable from any thread; never runs the job inline while the loop is open. (Steps of actors
    /// on the loop arrive through `unownedExecutor`, see "Two identities" above.)
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        serialExecutor.submit(.taskJob(job), late: .task(job, asUnownedTaskExecutor()))
    }

    /// The loop as an actor's executor: return it from an actor's `unownedExecutor`.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        serialExecutor.asUnownedSerialExecutor()
    }

    /// The loop as an actor's executor, spelled like `Actor.unownedExecutor` so that an actor can
    /// write `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }`.
    public var unownedExecutor: UnownedSerialExecutor { serialExecutor.asUnownedSerialExecutor() }

    /// Two loops are the same execution context only when they are the same loop.
    public func isSameExclusiveExecutionContext(other: Loop) -> Bool {
        other === self
    }

    /// Stops the program unless the caller is isolated to the loop (see "Isolation checks").
    public func checkIsolated() {
        serialExecutor.checkIsolated()
    }

    /// Whether the caller is isolated to the loop: on the loop's thread while the loop is open or
    /// shutting down, or, after it closed, on the thread running its late jobs. Never `nil`.
    public func isIsolatingCurrentContext() -> Bool? {
        serialExecutor.isIsolatingCurrentContext()
    }
}

/// The loop's executor identities, as `drainPosted` hands them to the runtime with each job.
struct LoopExecutorRefs {
    let serial: UnownedSerialExecutor
    let task: UnownedTaskExecutor
}
