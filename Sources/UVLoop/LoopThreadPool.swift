extension Loop {
    /// Queues `job` on libuv's thread pool: `runOnThreadPool` on a pool thread, then
    /// `finishOnLoop` on this loop's thread (see `ThreadPoolJob`).
    ///
    /// libuv lets only the loop's thread queue work: on the loop's thread the job is queued at
    /// once; from another thread it travels through the post queue (ordered with that thread's
    /// posts, without allocating a closure) and is queued when the loop drains it.
    ///
    /// Shutdown waits for queued jobs: closing the loop runs it until every after-work callback has
    /// been delivered. On an adopted loop, jobs still in flight at `detach()` finish on the owner's
    /// turns, and the owner's `uv_loop_close` returns `UV_EBUSY` until they have.
    /// - Throws: `LoopError.shutDown` (or `.detached`) once the loop no longer accepts work; the
    ///   job was not queued and will not be called.
    @usableFromInline
    package func queueWork(_ job: any ThreadPoolJob) throws(LoopError) {
        if isOnLoopThread {
            guard queue.isOpen else { throw queue.phase.refusal }
            threadPool.submit(job)
        } else {
            try enqueue(.threadPoolWork(job))
        }
    }

    /// The number of thread-pool jobs this loop queued whose finish has not run yet. Loop thread only.
    package var threadPoolJobsInFlight: Int {
        preconditionOnLoopThread("threadPoolJobsInFlight")
        return threadPool.jobsInFlight
    }
}
