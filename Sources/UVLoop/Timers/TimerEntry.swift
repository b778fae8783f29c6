/// A scheduled timer's place in the loop's firing order: when it is due, and its sequence number
/// among timers due at the same instant (the order they were scheduled in).
struct TimerEntry {
    var deadline: UInt64
    var sequence: UInt64
    /// The timer's slot (see `TimerSlots`).
    var slot: UInt32

    @inline(__always)
    func fires(before other: TimerEntry) -> Bool {
        deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
    }
}
