import UVLoop

/// What `EventRegistry` and `EventControl` share: registrations that live on the loop's thread,
/// the count of registered keys that any thread may read, and the way changes and sends reach the
/// loop's thread.
struct EventTable<State: AnyObject>: Sendable {
    /// The registrations, confined to the loop's thread.
    let state: LoopBound<State>
    /// How many actions each key has, kept in step with `state` by every change.
    let registered = RegisteredEventKeys()

    init(_ state: sending State, loop: Loop) {
        self.state = LoopBound(state, loop: loop)
    }

    var loop: Loop { state.loop }

    /// Applies `change` on the loop's thread: inline there; from another thread the caller waits
    /// until the loop's thread has applied it, so that a send which follows on the same thread
    /// sees it.
    func apply<T: Sendable>(
        _ change: @escaping @Sendable (State, RegisteredEventKeys) throws(LoopError) -> T
    ) throws(LoopError) -> T {
        if loop.isOnLoopThread { return try change(state.value, registered) }
        return try state.invoke { [registered] state in
            Result { () throws(LoopError) in try change(state, registered) }
        }.get()
    }

    /// Sends an event for `key`: `deliver` runs inline on the loop's thread. From another thread
    /// it is posted when `key` has registrations, and the answer is whether it had.
    func send(_ key: EventID, deliver: @escaping @Sendable () -> Bool) throws(LoopError) -> Bool {
        if loop.isOnLoopThread { return deliver() }
        guard registered.contains(key) else { return false }
        try loop.post { _ = deliver() }
        return true
    }
}
