extension LoopEngine {
    /// Whether the busy-poll window that the last drain with work opened is still open.
    var isBusyPolling: Bool {
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
        startIdle()
    }

    /// Queues a job from the loop's own thread (the caller checked that the loop accepts work).
    /// The idle handle makes the next poll non-blocking so that the job runs this turn or the next.
    ///
    /// Inside one of the loop's callbacks the handle is left to the callback's end
    /// (`afterCallback`, which starts it for the jobs queued, `hasOwnOrBatchedJobs`): a burst of
    /// posts from a callback then costs one look at the handle, not one per post. Outside any
    /// (a loop-thread post before the loop runs, or from an owner's own libuv callback on an
    /// attached loop) it is started here. An open loop's handles are not closed, so the
    /// `handlesClosed` check of `startIdle` is not needed either.
    @inline(__always)
    func appendOwn(_ job: consuming Job) {
        ownJobs.value.append(job)
        if !isInCallback { startIdle() }
    }

    /// `appendOwn`, moving the job out of `job` (see `Job.take`).
    @inline(__always)
    func appendOwn(taking job: inout Job) {
        appendOwn(Job.take(&job))
    }

    /// Jobs queued by the loop's thread or left over from a drain's snapshot.
    var hasOwnOrBatchedJobs: Bool {
        batchIndex < batch.count || !ownJobs.value.isEmpty
    }

    /// Runs at most `postBudget` queued jobs: those posted from other threads, then those the
    /// loop's thread queued. A snapshot of both is taken only when the previous one is used up,
    /// and at most once per call, so work the loop's thread queues while draining waits for a later
    /// drain. Jobs from other threads that arrive while a batch of theirs runs are taken in the
    /// same call (at most `lateTakesPerDrain` times), while the loop's thread has queued nothing
    /// meanwhile. The budget bounds both, so a job that re-posts itself forever cannot keep the
    /// loop from polling.
    func drainPosted(budget: Int? = nil) {
        let initialBudget = budget ?? postBudget
        var remaining = initialBudget
        var tookSnapshot = false
        var lateTakes = 0
        // Work on local copies: stored properties of this class touched across the call into a
        // job would each cost a run-time exclusivity check per job, and a job may drain
        // re-entrantly (a shutdown from inside a posted closure).
        var jobs: [Job] = []
        swap(&jobs, &batch)
        var index = batchIndex
        // The own ring is reached through its storage on every use, never copied to a local: a
        // job that drains re-entrantly takes from the same snapshot.
        while remaining > 0 {
            if index < jobs.count {
                let job = Job.take(&jobs[index])
                index += 1
                remaining -= 1
                run(job)
            } else if ownJobs.value.hasSnapshotJobs {
                // The loop thread's own jobs, one after another until the snapshot or the budget
                // ends: the batch from other threads is used up and cannot grow meanwhile.
                repeat {
                    remaining -= 1
                    run(ownJobs.value.takeFromSnapshot())
                } while remaining > 0 && ownJobs.value.hasSnapshotJobs
            } else if tookSnapshot {
                // Jobs that other threads queued while this batch ran (a task hopping back at
                // once): take them now, within the budget, rather than in a later turn whose poll
                // cannot block (one more `epoll_wait` and a turn's work each). Only after a batch
                // from other threads, so that a drain of the loop thread's own work pays no extra
                // lock; and only while the loop's thread has queued nothing meanwhile: its jobs make
                // the next poll non-blocking anyway and run after it (see "Order and threading
                // guarantees" in the Posting article), and more work first would only delay them.
                // At most `lateTakesPerDrain` times: a task that keeps hopping back would
                // otherwise hold the loop for the whole budget (thousands of round trips) with
                // timers and I/O waiting.
                if jobs.isEmpty || !ownJobs.value.isEmpty || lateTakes == Self.lateTakesPerDrain { break }
                lateTakes += 1
                jobs.removeAll(keepingCapacity: true)
                index = 0
                queue.takeAll(into: &jobs)
                if jobs.isEmpty { break }
            } else {
                jobs.removeAll(keepingCapacity: true)
                index = 0
                drainRequested = false
                queue.takeAll(into: &jobs)
                ownJobs.value.markSnapshot()
                tookSnapshot = true
                if jobs.isEmpty && !ownJobs.value.hasSnapshotJobs { break }
            }
        }
        swap(&jobs, &batch)
        batchIndex = index
        metrics.postedJobs &+= initialBudget - remaining
        if remaining < initialBudget { openBusyPollWindow() }
        if !tookSnapshot {
            // This call consumed a wake-up without looking at the queue: whatever that wake-up
            // announced must be picked up by a later drain.
            drainRequested = true
        }
    }

    /// How many times one drain takes jobs that other threads queued while it ran: each take
    /// saves a turn, and the bound keeps timers and I/O from waiting behind more than this many
    /// round trips of a task hopping back and forth.
    static let lateTakesPerDrain = 64

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


    /// Queues `job` (a `.run`) for the next iteration's check phase. Inside one of the loop's
    /// callbacks the check and idle handles are left to the callback's end, as for `appendOwn`
    /// (`updateHandles` starts both while `nextIteration` has jobs).
    @inline(__always)
    func appendNextIteration(_ job: consuming Job) {
        nextIteration.append(job)
        if !isInCallback {
            if !check.isActive { check.start() }
            startIdle()
        }
    }

    func runNextIterationSnapshot() {
        var snapshot: [Job] = []
        swap(&snapshot, &nextIterationSnapshot)
        swap(&nextIteration, &snapshot)
        metrics.nextIterationJobs &+= snapshot.count
        var index = 0
        while index < snapshot.count {
            let job = Job.take(&snapshot[index])
            index += 1
            run(job)
        }
        snapshot.removeAll(keepingCapacity: true)
        swap(&snapshot, &nextIterationSnapshot)
    }
}
