/// A listener's drain under way: the deadline's timer, and who waits for the end. Loop thread
/// only.
final class ListenerDrain {
    var timer: LoopTimer?
    var completions: [(Int) -> Void] = []
    /// How many connections the deadline closed.
    var closedAtDeadline = 0
}

extension StreamListenerCore {
    /// Stops accepting, then waits for the connections accepted here to close, closing those
    /// still open at `deadline`; `completion` gets how many the deadline closed.
    func startDrain(within deadline: Duration, _ completion: @escaping (Int) -> Void) {
        if let drain {
            drain.completions.append(completion)
            return
        }
        close(reason: .streamClosed)
        let drain = ListenerDrain()
        drain.completions.append(completion)
        self.drain = drain
        if openConnectionCount == 0 {
            // Never before this call returns.
            let box = LoopConfinedObject(self)
            if (try? loop.post { box.value.finishDrain() }) == nil { finishDrain() }
            return
        }
        let box = LoopConfinedObject(self)
        drain.timer = try? loop.schedule(after: deadline) { box.value.drainDeadlineHasPassed() }
    }

    private func drainDeadlineHasPassed() {
        guard let drain else { return }
        drain.timer = nil
        drain.closedAtDeadline = openConnectionCount
        // Found among the loop's open handles, once: a table of its own would cost every
        // accepted connection a slot for what only a drain's deadline needs.
        for case let connection as StreamConnectionCore in loop.engine.ioHandles.handles where connection.acceptingListener === self {
            connection.close(reason: .streamClosed)
        }
    }

    /// An accepted connection has closed (from its close callback, where user code may run).
    func connectionDidClose(_ connection: StreamConnectionCore) {
        openConnectionCount -= 1
        if drain != nil, openConnectionCount == 0 { finishDrain() }
    }

    private func finishDrain() {
        guard let drain else { return }
        drain.timer?.cancel()
        drain.timer = nil
        let completions = drain.completions
        drain.completions.removeAll()
        for completion in completions { completion(drain.closedAtDeadline) }
    }
}

extension StreamListener {
    /// Drains the server gracefully (Node's `server.close`, asyncio's `wait_closed`): stops
    /// accepting at once, lets the connections this listener accepted finish and close
    /// themselves, and closes those still open after `deadline`. `completion` runs on the
    /// loop's thread once every one of them is closed, with how many the deadline closed.
    /// Loop thread only.
    ///
    /// Connections the kernel has completed but the listener not yet accepted are reset when
    /// the listening socket closes, as with ``close()``.
    ///
    /// A connection that should finish sooner (an idle keep-alive connection, say) is the
    /// server's to close: ``StreamConnection/closeAfterFlushing(within:)->()`` lets its last answer
    /// arrive. Calling it again adds a completion to the drain under way.
    /// - Parameters:
    ///   - deadline: how long the open connections get, on the loop's clock.
    ///   - completion: gets the number of connections closed at the deadline (0 when all
    ///     finished in time).
    public func drain(within deadline: Duration, _ completion: @escaping (Int) -> Void) {
        loop.preconditionOnLoopThread("StreamListener.drain(within:_:)")
        box.value.startDrain(within: deadline, completion)
    }

    /// Drains the server gracefully (see ``drain(within:_:)``) and waits for it. Callable from
    /// any task. Cancelling the task does not end the wait: the deadline bounds it.
    /// - Parameter deadline: how long the open connections get, on the loop's clock.
    /// - Returns: the number of connections closed at the deadline (0 when all finished in time).
    /// - Throws: the loop's ``LoopError/shutDown`` when it has shut down (which closed every
    ///   connection already).
    @discardableResult
    public func drain(within deadline: Duration) async throws(LoopError) -> Int {
        let box = box
        return try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<Int>) in
            box.value.startDrain(within: deadline) { continuation.resume(returning: $0) }
        } cancel: { _ in }
    }
}

extension LoopGroup {
    /// Drains the listeners of every loop at once (see ``StreamListener/drain(within:)``), for
    /// example those of ``listen(on:backlog:_:)``, and waits until every connection they
    /// accepted has closed. Callable from any task; shut the group down afterwards.
    /// - Parameters:
    ///   - listeners: the listeners to drain.
    ///   - deadline: how long the open connections get.
    /// - Returns: the number of connections closed at the deadline, over all listeners.
    @discardableResult
    public func drain(_ listeners: [StreamListener], within deadline: Duration) async -> Int {
        await withTaskGroup(of: Int.self) { group in
            for listener in listeners {
                group.addTask { (try? await listener.drain(within: deadline)) ?? 0 }
            }
            return await group.reduce(0, +)
        }
    }
}
