/// One unit of work in the loop's cross-thread queue. Stored inline in the queue's buffer, so
/// enqueuing one costs no allocation beyond what the closure itself captured (and none at all for
/// a Swift concurrency job, which the runtime already allocated).
enum Job: Sendable {
    /// Run in the turn that drains it.
    case run(@Sendable () -> Void)
    /// Move to the next-iteration queue, which runs after the loop has polled for I/O.
    case nextIteration(@Sendable () -> Void)
    /// Queue on libuv's thread pool (which only the loop's thread may do). Carried as the job
    /// itself, so queuing work from another thread allocates no closure.
    case threadPoolWork(any ThreadPoolJob)
    /// A job for the loop as a `SerialExecutor`: a step of an actor pinned to the loop.
    case actorJob(UnownedJob)
    /// A job for the loop as a `TaskExecutor`: a step of nonisolated code in a task that prefers
    /// the loop.
    case taskJob(UnownedJob)
    /// An idle placeholder left behind when a job is moved out of the buffer.
    case empty

    /// Moves the job out of `job`, leaving `.empty`: how a job reaches a queue from code that can
    /// only borrow it (a closure run under a lock), without a retain and a release of its closure.
    @inline(__always)
    static func take(_ job: inout Job) -> Job {
        var moved = Job.empty
        swap(&moved, &job)
        return moved
    }
}
