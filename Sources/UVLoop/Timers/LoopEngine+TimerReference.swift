extension LoopEngine {
    /// References or unreferences the armed wake timer, which keeps the loop alive exactly while
    /// a referenced timer is scheduled (an owner's `uv_run(UV_RUN_DEFAULT)` returns when only
    /// unreferenced ones are left, as with libuv's `uv_unref` on its own timers). Unreferenced,
    /// it still wakes the loop when it comes due, if the loop is running for something else.
    @inline(never)  // off the scheduling path, which calls it only while a timer is unreferenced
    func updateWakeTimerReference() {
        guard armedDeadline != nil, !lifecycle.handlesClosed else { return }
        wakeTimer.keepsLoopAlive(timers.hasReferencedTimers())
    }

    /// References or unreferences the idle handle: it does not keep the loop alive while its only
    /// work is timers that are due and no referenced timer is scheduled. Otherwise a repeating
    /// unreferenced timer whose turns take longer than its interval (a slow callback, a loaded
    /// machine) would always be due again, and keep an owner's `uv_run` running for good;
    /// libuv's loop does not stay alive for an unreferenced timer that is due either.
    @inline(never)  // off the turn's path, which calls it only while a timer is unreferenced
    func updateIdleReference() {
        guard !lifecycle.handlesClosed else { return }
        let onlyTimersDue = timersDue && nextIteration.isEmpty && !drainRequested && !hasOwnOrBatchedJobs
            && !chunkedLoops.isPending && !inboxes.isBusy && !isBusyPolling
        let keeps = !onlyTimersDue || timers.hasReferencedTimers()
        idle.keepsLoopAlive(keeps)
        timers.idleUnreferenced = !keeps
    }

    /// The loop thread's half of `LoopTimer.setReferenced(_:)`.
    func setTimerReferenced(_ id: UInt64, _ referenced: Bool) -> Bool {
        guard timers.setReferenced(id, referenced) else { return false }
        updateWakeTimerReference()
        if timers.hasUnreferenced || timers.idleUnreferenced { updateIdleReference() }
        return true
    }
}
