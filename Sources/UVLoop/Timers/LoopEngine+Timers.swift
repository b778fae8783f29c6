import CLibUV

extension LoopEngine {
    /// Schedules timer `id` (pending, allocated on any thread); `now` is the clock reading the
    /// caller resolved `deadline` against. A timer cancelled on its way here is dropped; one fired
    /// on its way (see `TimerQueue.insert`) runs now.
    func schedule(_ id: UInt64, deadline: UInt64, now: UInt64, repetition: TimerRepetition, work: consuming TimerWork) {
        // Rescheduled on its way here: the newer deadline wins.
        let deadline = timers.takeMovedDeadline(slot: TimerSlots.slot(id)) ?? deadline
        if let ended = timers.insert(id, deadline: deadline, now: now, repetition: repetition, work: work) {
            // Fired on its way here: it runs now, as it arrives. Cancelled: dropped here.
            if ended.wasFired { run(ended.work) }
            return
        }
        noteScheduled(deadline, now: now)
    }

    /// Allocates a timer and schedules it `delay` from now; returns its id.
    func scheduleNew(after delay: UInt64, repetition: TimerRepetition, work: consuming TimerWork) -> UInt64 {
        let now = self.now
        let deadline = now.addingClamped(delay)
        let id = timers.schedule(deadline: deadline, now: now, repetition: repetition, work: work)
        noteScheduled(deadline, now: now)
        return id
    }

    /// Makes sure the loop wakes up for a timer just scheduled for `deadline`.
    @inline(__always)
    private func noteScheduled(_ deadline: UInt64, now: UInt64) {
        if deadline <= now {
            timersDue = true
            startIdle()
        } else if armedDeadline.map({ deadline < $0 }) ?? true {
            arm(for: deadline)
        } else if timers.hasUnreferenced {
            // The armed wake timer may be unreferenced (it waits only for unreferenced timers):
            // a new referenced timer must make it keep the loop alive.
            updateWakeTimerReference()
        }
    }

    /// Moves pending timer `id` to `deadline` (the loop thread's half of `LoopTimer.reschedule`).
    func reschedule(_ id: UInt64, deadline: UInt64) -> Bool {
        guard timers.reschedule(id, deadline: deadline) else { return false }
        noteScheduled(deadline, now: now)
        return true
    }

    /// Removes a timer that was cancelled; drops its work here, on the loop's thread. `current`:
    /// it was cancelled on this thread just now (see `TimerQueue.remove`).
    func discard(_ id: UInt64, current: Bool) {
        _ = timers.remove(id, current: current)
        disarmIfNoTimers()
    }

    /// Fires a pending timer now (the loop thread's half of `LoopTimer.fire()`).
    func fireNow(_ timer: LoopTimer) -> Bool {
        guard timers.shared.finish(timer.id, as: TimerSlots.fired) else { return false }
        // Inside its own callback a repeating timer is not scheduled: the firing loop frees it
        // afterwards; run a copy of the work.
        if let work = timers.remove(timer.id, current: true) ?? timers.work(at: TimerSlots.slot(timer.id)) { run(work) }
        disarmIfNoTimers()
        return true
    }

    /// Stops the wake timer once no timer is scheduled, as `uv_timer_stop` would: an armed wake
    /// timer keeps the loop alive, and an owner's `uv_run(UV_RUN_DEFAULT)` must not wait out a
    /// timeout that was cancelled. With timers left, it stays armed: at worst it wakes the loop
    /// once for an entry that was cancelled, and then re-arms for the next.
    private func disarmIfNoTimers() {
        if timers.count == 0 {
            guard armedDeadline != nil, !lifecycle.handlesClosed else { return }
            disarm()
        } else if timers.hasUnreferenced {
            // The timer that ended may have been the last referenced one.
            updateWakeTimerReference()
        }
    }

    /// Lets the loop end without the wake timer: it fired, or no timer is left to wake for.
    func disarm() {
        wakeTimer.stop()
        armedDeadline = nil
    }

    /// Fires, in (deadline, schedule order), the timers due now that were scheduled before this
    /// call began, at most `postBudget` of them; timers scheduled by these callbacks wait for a
    /// later turn even with a zero delay. When the budget runs out, the rest of the burst stays
    /// queued in order and `rearm()` finds it due: the idle handle fires it next turn, after a
    /// poll for I/O that does not block.
    func fireDueTimers() {
        fireBurst(now: now, sequenceLimit: timers.nextSequence, budget: postBudget)
    }

    /// Fires, in order and at most `budget` of them, the timers due at `now` with a schedule
    /// sequence below `sequenceLimit`.
    func fireBurst(now: UInt64, sequenceLimit limit: UInt64, budget: Int) {
        timersDue = false
        unfinishedBurst = nil
        let slots = timers.shared
        var remaining = budget
        while remaining > 0, let entry = timers.popDue(now: now, sequenceLimit: limit) {
            remaining -= 1
            let slot = entry.slot
            let repetition = timers.repetition(at: slot)
            if !repetition.isRepeating {
                let fired = slots.finish(slot: slot, as: TimerSlots.fired)
                // Released before it runs, so that the callback may reuse the slot.
                let work = timers.release(slot: slot)
                if fired, let work { run(work) }
            } else {
                guard slots.isPending(slot: slot), let work = timers.work(at: slot) else {
                    _ = timers.release(slot: slot)
                    continue
                }
                run(work)
                let now = self.now
                if let moved = timers.takeMovedDeadline(slot: slot), slots.isPending(slot: slot) {
                    // Rescheduled by its callback: the next tick is where it was moved to.
                    timers.reinsert(slot: slot, deadline: moved)
                    continue
                }
                let next = repetition.nextDeadline(after: entry.deadline, now: now)
                if next > now, slots.isPending(slot: slot) {
                    timers.reinsert(slot: slot, deadline: next)
                } else {
                    // Cancelled or fired by its callback; or its next tick would come after the end
                    // of time (clamped there, it would be due again at once, forever): it ends here.
                    _ = slots.finish(slot: slot, as: TimerSlots.fired)
                    _ = timers.release(slot: slot)
                }
            }
        }
        metrics.timersFired &+= budget - remaining
        if remaining == 0 { unfinishedBurst = (now, limit) }
        rearm()
    }

    private func run(_ work: TimerWork) {
        switch work {
        case .closure(let body): body()
        case .sleeper(let waiter): waiter.resume(with: .success(()))
        case .ticker(let ticker): ticker.tick(at: LoopInstant(nanoseconds: now))
        }
    }

    /// Points the wake timer (or, when already due, the idle handle) at the earliest deadline.
    private func rearm() {
        guard let deadline = timers.deadlineBound else {
            if armedDeadline != nil { disarm() }
            return
        }
        if deadline <= now {
            timersDue = true
            startIdle()
        } else if armedDeadline != deadline {
            arm(for: deadline)
        } else if timers.hasUnreferenced {
            updateWakeTimerReference()
        }
    }

    private func arm(for deadline: UInt64) {
        guard clockSource == .system else { return }
        wakeTimer.start(deadline: deadline)
        armedDeadline = deadline
        if timers.hasUnreferenced { updateWakeTimerReference() }
    }

    /// Whether a timer is due at `now` (a chunked loop ends its chunk early for one).
    @inline(__always)
    func hasDueTimers(at now: UInt64) -> Bool { timers.hasDue(at: now) }

    /// Cancels every pending timer: what the loop's shutdown and detach need. A sleeping task
    /// throws `reason`, a tick sequence ends, a closure is released without running.
    func cancelAllTimers(reason: LoopError) {
        timers.unreferenced.removeAll()
        timers.hasUnreferenced = false
        timers.idleUnreferenced = false
        for (slot, work) in timers.removeAll() {
            guard timers.shared.finish(slot: slot, as: TimerSlots.cancelled) else { continue }
            switch work {
            case .sleeper(let waiter): waiter.resume(with: .failure(reason))
            case .ticker(let ticker): ticker.finish()
            case .closure: break
            }
        }
    }

    /// Moves the manual clock (tests only); the caller then runs the loop so due timers fire.
    func setManualNow(_ value: UInt64) {
        misusePrecondition(clockSource == .manual, "UVLoop: only a loop created with clock: .manual can be advanced")
        manualTime.advance(to: value)
        if timers.hasDue(at: manualNow) {
            timersDue = true
            startIdle()
        }
    }
}
