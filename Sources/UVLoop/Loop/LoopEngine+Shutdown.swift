extension LoopEngine {
    /// Runs everything posted before shutdown began, cancels pending timers, closes every handle.
    /// Work posted after shutdown began was refused by the queue. Executor jobs are still admitted
    /// while shutting down (a cancelled sleeper's task must get back to its actor): they run here,
    /// and the loop closes only in a lock that sees none left.
    /// `onLoopThread: false` (a loop released on another thread, with nothing queued): a burst the
    /// budget cut short is cancelled with the other timers, since no timer may run off the loop's
    /// thread.
    func shutDownNow(finalPhase: LoopPhase = .closed, onLoopThread: Bool = true) {
        guard !handlesClosed else { return }
        // Timers already due in a burst the budget cut short fire before the shutdown cancels
        // the rest: the burst is part of the turn that requested it.
        if onLoopThread, let burst = unfinishedBurst {
            fireBurst(now: burst.now, sequenceLimit: burst.sequenceLimit, budget: .max)
        }
        var released = false
        repeat {
            while true {
                drainPosted(budget: .max)
                if hasOwnOrBatchedJobs || !queue.isEmpty { continue }
                if nextIteration.isEmpty { break }
                runNextIterationSnapshot()
            }
            if !released {
                released = true
                releaseInboxesAndTimers()
            }
            // Closing inboxes and timers may have queued jobs (a sleeper's task resuming): the
            // queue closes only once this thread's jobs are drained too.
        } while hasOwnOrBatchedJobs || !queue.close(as: finalPhase)
        // No waker can register any more (the phase refuses work); let those in flight finish.
        queue.waitForWakers()
        wake.close()
        idle.close()
        check.close()
        prepare.close()
        wakeTimer.close()
        handlesClosed = true
        if !native.isOwned { AdoptedLoops.remove(native.pointer) }
    }

    private func releaseInboxesAndTimers() {
        // Chunked loops stop here: their completions report the shutdown and what was processed.
        chunkedLoops.stopAll()
        // I/O handles close first: their close callbacks (a read ending, a watch's sequence
        // finishing) may post or resume tasks, which the drain after this runs.
        closeIOHandles()
        for inbox in inboxes.values { inbox.close() }
        inboxes.removeAll()
        unsettledInboxes.removeAll()
        inboxesBusy = false
        for (slot, work) in timers.removeAll() {
            guard timers.shared.finish(slot: slot, as: TimerSlots.cancelled) else { continue }
            switch work {
            case .sleeper(let waiter): waiter.resume(with: .failure(LoopError.shutDown))
            case .ticker(let ticker): ticker.finish()
            case .closure: break
            }
        }
    }
}
