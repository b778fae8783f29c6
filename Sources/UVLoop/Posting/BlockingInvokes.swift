
/// The threads blocked in a synchronous `invoke`, each with the loop thread it waits for: the
/// wait-for graph across the process's loops. An invoke that would close a cycle (the thread of
/// loop A waits in `B.invoke` while B's thread is waiting, directly or through other loops, for
/// A's) throws ``LoopError/wouldDeadlock(operation:)`` instead of blocking forever.
///
/// A blocked thread cannot start a second wait, so each thread has at most one entry. The check
/// and the insertion happen under one lock, so two threads closing a cycle at the same moment
/// cannot both miss it: the second sees the first. Only blocking waits are recorded; the lock
/// costs far less than the wake-up and hand-off of the invoke itself.
enum BlockingInvokes {
    /// Each waiting thread and the loop thread it waits for (thread numbers, see
    /// `ThreadIdentity`). A short list, scanned: a map would hash on every invoke.
    private static let waits = NativeMutex<[(caller: UInt, target: UInt)]>([])

    /// Records that thread `caller` is about to block until loop thread `target` has run its work.
    /// - Throws: ``LoopError/wouldDeadlock(operation:)`` when `target` is already waiting,
    ///   through a chain of blocking invokes, for `caller`: nothing is recorded then.
    static func begin(caller: UInt, waitingFor target: UInt, operation: String) throws(LoopError) {
        let closesCycle = waits.withLock { waits -> Bool in
            var next = target
            // Each step follows one blocked thread; the chain is no longer than the list.
            for _ in 0...waits.count {
                if next == caller { return true }
                guard let step = waits.first(where: { $0.caller == next }) else { break }
                next = step.target
            }
            waits.append((caller, target))
            return false
        }
        if closesCycle {
            throw .wouldDeadlock(operation: "\(operation) (the target loop's thread is itself blocked waiting for this thread)")
        }
    }

    /// The wait `begin` recorded for `caller` is over.
    static func end(caller: UInt) {
        waits.withLock { waits in
            guard let index = waits.firstIndex(where: { $0.caller == caller }) else { return }
            waits.swapAt(index, waits.count - 1)
            waits.removeLast()
        }
    }
}
