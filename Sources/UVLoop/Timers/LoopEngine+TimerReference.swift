extension LoopEngine {
    /// References or unreferences the armed wake timer, which keeps the loop alive exactly while
    /// a referenced timer is scheduled (an owner's `uv_run(UV_RUN_DEFAULT)` returns when only
    /// unreferenced ones are left, as with libuv's `uv_unref` on its own timers). Unreferenced,
    /// it still wakes the loop when it comes due, if the loop is running for something else.
    func updateWakeTimerReference() {
        guard armedDeadline != nil, !lifecycle.handlesClosed else { return }
        wakeTimer.keepsLoopAlive(timers.hasReferencedTimers())
    }

    /// The loop thread's half of `LoopTimer.setReferenced(_:)`.
    func setTimerReferenced(_ id: UInt64, _ referenced: Bool) -> Bool {
        guard timers.setReferenced(id, referenced) else { return false }
        updateWakeTimerReference()
        return true
    }
}
