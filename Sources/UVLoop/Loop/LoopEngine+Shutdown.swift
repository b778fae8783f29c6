extension LoopEngine {
    /// Finishes the loop's ending (a shutdown or detach that `LoopLifecycle` has begun), on the
    /// loop's thread. Idempotent. The one order, each step its subsystem's own:
    ///
    /// 1. Timers already due in a burst that the budget cut short fire: the burst is part of the
    ///    turn that asked for the ending.
    /// 2. Posted and next-iteration work accepted before the ending runs (work posted after it
    ///    began was refused).
    /// 3. Chunked loops stop (`ChunkScheduler.stopAll`): their completions report the ending and
    ///    what was processed.
    /// 4. I/O handles close (`LoopIOHandles.closeAll`): their endings (a read failing, a watch's
    ///    sequence finishing) may post or resume tasks, which the next drain runs.
    /// 5. Inboxes close (`LoopInboxes.closeAll`), each after a final drain.
    /// 6. Pending timers are cancelled (`cancelAllTimers`): sleepers throw the loop's refusal,
    ///    tick sequences end.
    /// 7. What steps 3 to 6 queued runs; the queue closes in the lock that sees it empty
    ///    (`LoopLifecycle.finishEnding`). Executor jobs are still admitted while the loop ends (a
    ///    cancelled sleeper's task must get back to its actor), so this repeats until none is left.
    /// 8. The loop's own handles close once no thread is still sending a wake-up, and the handles
    ///    are marked closed.
    ///
    /// Thread-pool work in flight is not waited for: its completion runs on a later turn (see
    /// `Loop.detach()`), and reports the ending.
    ///
    /// `onLoopThread: false` (a loop released on another thread, with nothing queued): a burst the
    /// budget cut short is cancelled with the other timers, since no timer may run off the loop's
    /// thread.
    func finishEnding(onLoopThread: Bool = true) {
        guard !lifecycle.handlesClosed else { return }
        if onLoopThread, let burst = unfinishedBurst {
            fireBurst(now: burst.now, sequenceLimit: burst.sequenceLimit, budget: .max)
        }
        var subsystemsClosed = false
        repeat {
            drainAllQueuedWork()
            if !subsystemsClosed {
                subsystemsClosed = true
                chunkedLoops.stopAll()
                ioHandles.closeAll()
                inboxes.closeAll()
                cancelAllTimers(reason: lifecycle.refusal)
            }
        } while hasOwnOrBatchedJobs || !lifecycle.finishEnding()
        // No waker can register any more (the phase refuses work); let those in flight finish.
        lifecycle.waitForWakers()
        wake.close()
        idle.close()
        check.close()
        prepare.close()
        wakeTimer.close()
        lifecycle.markHandlesClosed()
        if !native.isOwned { AttachedLoops.remove(native.pointer) }
    }

    /// Runs posted and next-iteration work, with no budget, until none is queued.
    private func drainAllQueuedWork() {
        while true {
            drainPosted(budget: .max)
            if hasOwnOrBatchedJobs || !queue.isEmpty { continue }
            if nextIteration.isEmpty { return }
            runNextIterationSnapshot()
        }
    }
}
