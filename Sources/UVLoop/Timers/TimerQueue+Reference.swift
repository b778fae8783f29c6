// References: which scheduled timers keep the loop alive (libuv's uv_ref and uv_unref, per timer).

extension TimerQueue {
    /// Whether a scheduled timer keeps the loop alive: one that is not marked unreferenced.
    /// Marks of timers that have ended are dropped here. O(1) while no timer is unreferenced,
    /// otherwise O(unreferenced timers), which a program keeps to a few (a statistics tick, a
    /// cache sweep).
    mutating func hasReferencedTimers() -> Bool {
        guard hasUnreferenced else { return count > 0 }
        var unreferencedScheduled = 0
        var ended: [UInt32] = []
        for (slot, id) in unreferenced {
            if !shared.isPending(id) {
                ended.append(slot)
            } else if Int(slot) < slots.count, scheduled.contains(slot) {
                // Pending and current: the slot's live entry is this timer's.
                unreferencedScheduled += 1
            }
        }
        for slot in ended { unreferenced[slot] = nil }
        hasUnreferenced = !unreferenced.isEmpty
        return count > unreferencedScheduled
    }

    /// Marks pending timer `id` as keeping the loop alive or not; false when it has ended.
    mutating func setReferenced(_ id: UInt64, _ referenced: Bool) -> Bool {
        guard shared.isPending(id) else { return false }
        let slot = TimerSlots.slot(id)
        if !referenced {
            unreferenced[slot] = id
        } else if unreferenced[slot] == id {
            unreferenced[slot] = nil
        }
        hasUnreferenced = !unreferenced.isEmpty
        return true
    }
}
