extension Loop {
    /// Queues `job` on libuv's thread pool: `runOnThreadPool` on a pool thread, then
    /// `finishOnLoop` on this loop's thread (see `ThreadPoolJob`).
    ///
    /// libuv lets only the loop's thread queue work, so the job travels through the post queue
    /// (without allocating a closure) and is queued when the loop drains it, in order with the
    /// calling thread's other posts. It does so from the loop's thread too, where it could be
    /// queued at once: a callback that starts many jobs then hands them to the pool in one tight
    /// run at the next drain, rather than one by one between its own work, when the pool threads
    /// keep emptying libuv's queue, going to sleep, and being woken again by the next job (a futex
    /// wake and a context switch per job).
    ///
    /// Shutdown waits for queued jobs: closing the loop runs it until every after-work callback has
    /// been delivered. On an attached loop, jobs still in flight at `detach()` finish on the owner's
    /// turns, and the owner's `uv_loop_close` returns `UV_EBUSY` until they have.
    /// The process's first job first checks that libuv's pool can start its threads (see
    /// `ThreadPoolStart`): libuv would abort the process if it cannot.
    /// - Throws: `LoopError.shutDown` (or `.detached`) once the loop no longer accepts work;
    ///   `LoopError.libuv` when the pool's threads cannot be started. The job was not queued and
    ///   will not be called.
    @usableFromInline
    package func queueWork(_ job: any ThreadPoolJob) throws(LoopError) {
        try ThreadPoolStart.ensure()
        try enqueue(.threadPoolWork(job))
    }

    /// The number of thread-pool jobs this loop queued whose finish has not run yet. Loop thread only.
    package var threadPoolJobsInFlight: Int {
        preconditionOnLoopThread("threadPoolJobsInFlight")
        return engine.threadPool.jobsInFlight
    }

    /// The number of thread-pool slots this loop holds, free or in use. Loop thread only.
    var threadPoolSlotCount: Int {
        preconditionOnLoopThread("threadPoolSlotCount")
        return engine.threadPool.slotCount
    }
}
