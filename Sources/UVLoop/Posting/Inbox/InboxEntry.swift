/// What the loop keeps of an open inbox (see `Loop.makeInbox`): closures into its consumer, which
/// is specialised for the message type in the module that made the inbox.
struct InboxEntry {
    /// The prepare phase's look at the inbox while it is unsettled (`InboxConsumer.settle()`).
    let settle: () -> InboxSettling
    /// Runs the final drain and closes the wake handle, once (at close, shutdown and detach).
    let close: () -> Void
    /// Whether messages may wait (`InboxConsumer.hasWaiting`).
    let hasWaiting: () -> Bool
    /// The messages sent and not yet delivered (`InboxConsumer.waitingCount`).
    let waitingCount: () -> Int
}
