/// Where an inbox's delivery left it: what the loop must do before it next polls (see
/// `InboxConsumer.deliver()` and `InboxConsumer.settle()`).
@usableFromInline
enum InboxSettling {
    /// The wake-pending flag is clear and the ring was empty: a sender wakes the loop.
    case settled
    /// The flag is still set: the loop looks at the ring again in its prepare phase.
    case unsettled
    /// Messages keep coming or wait beyond the budget: the flag stays set and the next poll must
    /// not block.
    case busy
    /// The inbox has closed: the loop runs its final drain and closes its handle.
    case closed
}
