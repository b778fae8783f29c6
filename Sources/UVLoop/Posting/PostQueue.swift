import Synchronization

/// The cross-thread half of a loop: a multi-producer, single-consumer queue of jobs.
///
/// Producers append under a mutex; the loop's thread swaps the whole buffer out in one lock and
/// runs it outside the lock, so a producer never waits for work to run. Both buffers keep their
/// capacity, so in steady state posting allocates nothing. The wake-up flag makes posting cost no
/// wake-up while the loop is awake: only the post that finds it clear wakes the loop, and the loop
/// clears it only right before a poll that may block, in the lock that sees the queue empty
/// (`LoopLifecycle.rearmWakeUnlessPending`). Until then the loop looks at the queue again before it
/// polls, so a post that arrives while it works sends no wake-up, and the loop reads none. (The
/// loop's own thread queues into `LoopEngine`'s loop-confined queue instead, without the lock,
/// while the loop is open; once its ending begins, its executor jobs come here too.)
///
/// The storage lives under the lifecycle's lock (`LoopLifecycle.Guarded.jobs`), which decides
/// whether a post is admitted in the same step that queues it.
final class PostQueue: Sendable {
    let lifecycle: LoopLifecycle

    /// `Loop.busyPoll` in nanoseconds: set from any thread, read by the loop's thread.
    let busyPollNanoseconds = Atomic<UInt64>(0)

    init(lifecycle: LoopLifecycle) {
        self.lifecycle = lifecycle
    }

    /// Appends `job` from a thread other than the loop's, and wakes the loop unless a wake-up is
    /// already pending. `job` is moved into the queue (left `.empty`) when it is queued, and left
    /// as it was when the loop refuses it.
    @inline(__always)
    func append(taking job: inout Job, waking wake: WakeHandle) throws(LoopError) {
        try lifecycle.admitPost(waking: wake) { $0.jobs.append(Job.take(&job)) }
    }

    /// Swaps the pending jobs into `buffer` (which must be empty). The wake-up flag stays set: the
    /// loop is awake, and the lifecycle re-arms it before the loop next blocks.
    @inline(__always)
    func takeAll(into buffer: inout [Job]) {
        lifecycle.withGuarded { swap(&$0.jobs, &buffer) }
    }

    var isEmpty: Bool { lifecycle.withGuarded { $0.jobs.isEmpty } }

    /// The jobs queued by other threads and not yet taken by the loop.
    var count: Int { lifecycle.withGuarded { $0.jobs.count } }
}
