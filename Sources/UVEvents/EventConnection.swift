import UVLoop

/// One (target, action) pair added to an ``EventControl``: the handle that removes exactly it.
///
/// Function values cannot be compared in Swift, so a pair cannot be found again by its action the
/// way UIKit finds a selector; the connection names it instead. It holds its control weakly and
/// may be kept, passed between threads, or dropped: dropping it leaves the pair in place.
public final class EventConnection: Sendable {
    private weak let control: EventControl?
    private let key: EventID
    private let pairID: UInt64

    init(control: EventControl, key: EventID, pairID: UInt64) {
        self.control = control
        self.key = key
        self.pairID = pairID
    }

    /// Removes the pair. Idempotent. Callable from any thread: inline on the loop's thread,
    /// otherwise the caller waits until the loop's thread has removed it; a send that is already
    /// running on the loop skips the pair from then on.
    /// - Returns: whether the pair was still there (`false` when it was already removed, by this
    ///   call, ``EventControl/removeTarget(_:)``, a send that found its target deallocated, or the
    ///   control is gone).
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work.
    @discardableResult
    public func remove() throws(LoopError) -> Bool {
        guard let control else { return false }
        return try control.remove(pairID: pairID, from: key)
    }
}
