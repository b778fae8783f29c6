// Slots: which entry of a slot is live, dropping dead and stale entries one at a time, and
// freeing slots (handed back to other threads when the loop's thread keeps too many).

extension TimerQueue {
    @inline(__always)
    mutating func clearScheduled(_ slot: UInt32) {
        scheduled.remove(slot)
        count -= 1
    }

    /// Empties a slot and returns its work (nothing user-visible is released here: the caller
    /// drops the returned work).
    mutating func takeWork(_ slot: UInt32) -> TimerWork {
        slots.exchange(at: Int(slot), with: Slot(work: nil, repetition: .none)).work!
    }

    /// Whether `entry` is its timer's live entry: the timer is scheduled and, if it was
    /// rescheduled, this is its latest entry.
    @inline(__always)
    func isLive(_ entry: TimerEntry) -> Bool {
        Self.isLive(entry, scheduled: scheduled, rescheduled: rescheduled, moves: moves)
    }

    /// `isLive` on the parts it reads, for closures that run while the wheel or heap is changing.
    @inline(__always)
    static func isLive(
        _ entry: TimerEntry, scheduled: borrowing SlotBitmap, rescheduled: borrowing SlotBitmap,
        moves: borrowing NoncopyableArray<Moves>
    ) -> Bool {
        scheduled.contains(entry.slot)
            && (!rescheduled.contains(entry.slot) || moves[Int(entry.slot)].liveSequence == entry.sequence)
    }

    /// Accounts for a dead or stale entry of `slot` that was just dropped, freeing the slot once
    /// no entry of a dead timer is left.
    @inline(__always)
    mutating func dropStale(_ slot: UInt32) {
        guard rescheduled.contains(slot) else {
            dead.remove(slot)
            deadCount -= 1
            free(slot)
            return
        }
        deadCount -= 1
        entryLeft(slot)
    }

    /// One entry of rescheduled `slot` left the queue; after the last one the slot is an ordinary
    /// slot again, and freed if its timer has ended.
    mutating func entryLeft(_ slot: UInt32) {
        moves[Int(slot)].entries -= 1
        guard moves[Int(slot)].entries == 0 else { return }
        rescheduled.remove(slot)
        if dead.contains(slot) {
            dead.remove(slot)
            free(slot)
        }
    }

    /// Frees the slots of every dead entry (all dropped), highest first: `allocate` hands them out
    /// again lowest first.
    mutating func freeDeadSlots() {
        dead.removeAll(into: &freeSlots)
        deadCount = 0
        handBackIfWanted()
    }

    mutating func free(_ slot: UInt32) {
        if !movedDeadlines.isEmpty { movedDeadlines[slot] = nil }
        freeSlots.append(slot)
        handBackIfWanted()
    }

    @inline(__always)
    mutating func handBackIfWanted() {
        if shared.isWanted && freeSlots.count > Self.freeSlotsKept {
            shared.takeBack(&freeSlots, keeping: Self.freeSlotsKept)
        }
    }
}
