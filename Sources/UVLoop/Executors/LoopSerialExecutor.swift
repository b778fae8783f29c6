/// The loop as the serial executor of its actors, and the one way executor jobs enter the loop's
/// queue.
///
/// It is a separate object so that its identity differs from the loop's: the runtime hands it the
/// steps of actors, which run isolated to the loop, and hands the loop itself (the task executor)
/// the steps of tasks that prefer the loop, which run as nonisolated code. If both arrived at one
/// object they could not be told apart, and running either kind the other's way costs an extra
/// trip through the queue at calls between them. (The task executor is the loop itself, not a
/// companion, because `Task(executorPreference:)` retains the executor it is given and releases
/// the identity that `asUnownedTaskExecutor()` returns: the two must be the same object.)
final class LoopSerialExecutor: SerialExecutor {
    let queue: PostQueue
    let wake: WakeHandle
    let thread: ThreadIdentity
    let confined: LoopConfinedObject<LoopEngine>

    init(queue: PostQueue, wake: WakeHandle, thread: ThreadIdentity, confined: LoopConfinedObject<LoopEngine>) {
        self.queue = queue
        self.wake = wake
        self.thread = thread
        self.confined = confined
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        submit(.actorJob(job), late: .actor(job, asUnownedSerialExecutor()))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        misusePrecondition(
            isIsolatingCurrentContext() == true,
            "UVLoop: code isolated to the loop ran off the loop's thread (or after the loop closed); reach the loop with await, post or invoke instead of assuming isolation")
    }

    func isIsolatingCurrentContext() -> Bool? {
        let current = ThreadIdentity.current
        return queue.lifecycle.withGuarded { state in
            switch state.phase {
            case .open, .shuttingDown, .detaching: current == thread
            case .closed, .detached: state.lateRunner == current
            }
        }
    }

    /// The hot path: from the loop's thread one append to its own queue; from another thread one
    /// lock, one append, and a wake-up only if the loop may be asleep.
    @inline(__always)
    func submit(_ job: Job, late: @autoclosure () -> LateJob) {
        let onLoopThread = ThreadIdentity.current == thread
        if onLoopThread, queue.lifecycle.acceptsWork {
            // In order with the loop thread's posts, without the lock.
            confined.withValue { $0.appendOwn(job) }
            return
        }
        // From here on an open phase means another thread: the loop's own thread sees `isOpen`
        // turn false in the same lock that ends the open phase.
        switch queue.admit(job, late: late(), waking: wake) {
        case .queued: break
        case .runHere: runLateJobs(startingWith: late())
        }
    }

    /// Runs jobs that reached the closed loop, on this thread, until none is left. Jobs that other
    /// threads (or these jobs) enqueue meanwhile join the queue that this loop drains, so they run
    /// one at a time and in order, as on the loop.
    private func runLateJobs(startingWith first: LateJob) {
        first.run()
        var batch: [LateJob] = []
        while queue.takeLateJobs(into: &batch) {
            for job in batch { job.run() }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
