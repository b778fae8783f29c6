import Synchronization
import UVLoop

/// A set of requests in flight, so that they can all be cancelled at once.
///
/// A request joins the session it is started in (``LoopOperation/start(on:session:)``, by default
/// ``shared``) and leaves it when it completes, just before its waiters wake. Sessions are
/// thread-safe: start, complete and cancel from any thread.
///
/// ```swift
/// let session = OperationSession()
/// let request = try operation.start(on: loop, session: session)
/// session.cancelAll()             // cancels every request of this session still in flight
/// ```
public final class OperationSession: Sendable {
    /// The session requests join unless told otherwise: every loop's, process-wide. Its
    /// ``cancelAll()`` cancels every request started without a session of its own.
    public static let shared = OperationSession()

    /// Members in slots that are reused, so joining and leaving cost no hashing and, in steady
    /// state, no allocation.
    private struct Members {
        var slots: [(any CancellableRequest)?] = []
        var freeSlots: [Int] = []
        var count = 0
    }

    private let members = NativeMutex(Members())

    /// An empty session.
    public init() {}

    /// The number of requests in flight in this session. Any thread.
    public var requestCount: Int { members.withLock { $0.count } }

    /// Cancels every request in flight in this session (see ``OperationRequest/cancel()``).
    /// Callable from any thread.
    ///
    /// Requests started while this runs may or may not be cancelled; each request still completes
    /// exactly once.
    /// - Returns: how many requests this call cancelled (those not already cancelled or completing).
    @discardableResult
    public func cancelAll() -> Int {
        let requests = members.withLock { members in members.slots.compactMap { $0 } }
        var cancelled = 0
        for request in requests where request.cancel() { cancelled += 1 }
        return cancelled
    }

    /// Enters `request` and returns its slot, for `remove(slot:)`.
    @usableFromInline
    func insert(_ request: any CancellableRequest) -> Int {
        members.withLock { members in
            members.count += 1
            if let slot = members.freeSlots.popLast() {
                members.slots[slot] = request
                return slot
            }
            members.slots.append(request)
            return members.slots.count - 1
        }
    }

    /// Removes the request that `insert` gave `slot`.
    @usableFromInline
    func remove(slot: Int) {
        let released = members.withLock { members -> (any CancellableRequest)? in
            let released = members.slots[slot].take()
            members.count -= 1
            if members.count == 0, members.slots.count > 1024 {
                // A burst is over: give its memory back.
                members.slots = []
                members.freeSlots = []
            } else {
                members.freeSlots.append(slot)
            }
            return released
        }
        // The last reference may go here: release it outside the lock.
        _ = released
    }
}
