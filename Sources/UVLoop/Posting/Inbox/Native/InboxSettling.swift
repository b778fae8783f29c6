/// Where an inbox's delivery left it: what the loop must do before it next polls (see
/// `InboxConsumer.deliver()` and `InboxConsumer.settle()`).
@usableFromInline
enum InboxSettling {
    /// The wake-pending flag is clear and the ring was empty: a sender wakes the loop.
    case settled
    /// The flag is still set, so senders send no wake-up: the loop must look at the ring again in
    /// its prepare phase, and until then no poll may block (the idle handle is active, so an owner
    /// that polls the loop's backend descriptor itself sees a zero timeout).
    case busy
    /// The inbox has closed: the loop runs its final drain and closes its handle.
    case closed
}
