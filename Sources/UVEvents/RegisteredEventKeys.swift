import Synchronization
/// How many actions each event key has, as any thread may read it.
///
/// The registrations themselves (weak targets, actions) are confined to the loop's thread. A send
/// from another thread must still answer "was there an action to run?" without waiting for the
/// loop, so the loop keeps this count up to date in the same step as every change it makes. Only
/// the loop's thread writes; every change to the registrations is applied on the loop's thread
/// before the call that asked for it returns, so a reader sees every change whose call returned
/// before the read began.
final class RegisteredEventKeys: Sendable {
    private let counts = Mutex<[EventID: Int]>([:])

    /// Whether `id` had at least one action registered when the lock was taken.
    func contains(_ id: EventID) -> Bool {
        counts.withLock { $0[id] != nil }
    }

    /// Records that `id` now has `count` actions. Loop thread only.
    func set(_ id: EventID, count: Int) {
        counts.withLock { $0[id] = count > 0 ? count : nil }
    }

    /// Records that no key has actions any more. Loop thread only.
    func removeAll() {
        counts.withLock { $0.removeAll() }
    }
}
