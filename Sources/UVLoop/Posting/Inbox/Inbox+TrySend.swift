extension Inbox {
    /// Sends `message` to the receiver unless the inbox is full; never waits. Callable from any
    /// thread; never runs the receiver inline.
    ///
    /// For a thread that must not wait for the loop (an audio, packet or trading thread): where
    /// ``send(_:)`` would wait for room, this returns `false` and the caller decides what to do
    /// with the message (drop it, count it, keep it for later).
    ///
    /// ```swift
    /// let inbox = try loop.makeInbox(of: Int.self, capacity: 1024) { value in total.value += value }
    /// if try !inbox.trySend(42) {
    ///     dropped += 1            // full: the loop is behind; this thread goes on at once
    /// }
    /// ```
    /// - Parameter message: the value the receiver gets, after the values this thread sent before.
    /// - Returns: `true` when the message was sent; `false` when the inbox was full (on any
    ///   thread, the loop's own included), so that it was not.
    /// - Throws: ``LoopError/inboxClosed`` once the inbox is closed, ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) once its loop is (the message was not sent).
    @inlinable @inline(__always)
    public func trySend(_ message: Message) throws(LoopError) -> Bool {
        switch ring.push(message) {
        case .pushed:
            ring.wakeIfNeeded(wake)
            return true
        case .closed:
            throw whyClosed
        case .full:
            // Make sure the loop is draining the ring, so that room comes.
            ring.wakeIfNeeded(wake)
            return false
        }
    }
}
