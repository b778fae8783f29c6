/// The loop's conformances to `SerialExecutor` (for actors) and `TaskExecutor` (for tasks that
/// prefer the loop). Their guarantees (ordering with posts, isolation checks, jobs after shutdown)
/// are documented on `Loop` itself, where DocC shows them.
///
/// Actors see the loop through `unownedExecutor`, a companion object (`LoopSerialExecutor`);
/// tasks that prefer the loop see the loop itself. Keeping the two identities apart lets the
/// runtime tell the steps of actors (run isolated to the loop) from the steps of tasks (run as
/// nonisolated code), and each kind of call avoid an extra trip through the queue.
extension Loop: SerialExecutor, TaskExecutor {
    /// Queues a step of a task that prefers this loop as its task executor; the runtime calls it.
    ///
    /// Callable from any thread; never runs the job inline while the loop is open. The job joins
    /// the queue of posted work, in order with the calling thread's posts (see "Ordering" in
    /// ``Loop``); after the loop has closed it runs on the calling thread (see "Shutdown" in
    /// ``Loop``). Steps of actors on the loop arrive through ``unownedExecutor`` instead.
    /// - Parameter job: the task's next step.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        serialExecutor.submit(.taskJob(job), late: .task(job, asUnownedTaskExecutor()))
    }

    /// The loop as an actor's executor: return it from an actor's `unownedExecutor`.
    ///
    /// The same executor as ``unownedExecutor``.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        serialExecutor.asUnownedSerialExecutor()
    }

    /// The loop as an actor's executor, spelled like `Actor.unownedExecutor` so that an actor can
    /// write `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }`.
    ///
    /// An actor that returns it runs every one of its methods on the loop's thread, its steps
    /// queued with the loop's posts (see "Ordering" in ``Loop``):
    ///
    /// ```swift
    /// actor Counter {
    ///     let loop: Loop                  // the actor keeps its loop alive
    ///     private(set) var value = 0
    ///     init(loop: Loop) { self.loop = loop }
    ///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }
    ///     func increment() -> Int { value += 1; return value }
    /// }
    /// ```
    ///
    /// The actor must keep its loop alive (a stored `let`), as above: the executor reference the
    /// runtime holds is unowned.
    public var unownedExecutor: UnownedSerialExecutor { serialExecutor.asUnownedSerialExecutor() }

    /// Two loops are the same execution context only when they are the same loop.
    /// - Parameter other: the loop to compare with.
    public func isSameExclusiveExecutionContext(other: Loop) -> Bool {
        other === self
    }

    /// Stops the program unless the caller is isolated to the loop, as
    /// ``isIsolatingCurrentContext()`` defines it (see "Swift concurrency" in ``Loop``).
    public func checkIsolated() {
        serialExecutor.checkIsolated()
    }

    /// Whether the caller is isolated to the loop: on the loop's thread while the loop is open or
    /// shutting down, or, after it closed, on the thread running its late jobs. Never `nil`.
    /// Callable from any thread.
    public func isIsolatingCurrentContext() -> Bool? {
        serialExecutor.isIsolatingCurrentContext()
    }
}

/// The loop's executor identities, as `drainPosted` hands them to the runtime with each job.
struct LoopExecutorRefs {
    let serial: UnownedSerialExecutor
    let task: UnownedTaskExecutor
}
