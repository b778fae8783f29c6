/// A loop's open inboxes, and which of them the prepare phase looks at before the loop polls (see
/// `LoopEngine.settleInboxes()`). Loop thread only.
final class LoopInboxes {
    struct State {
        /// The open inboxes (see `InboxEntry`).
        var open: [ObjectIdentifier: InboxEntry] = [:]
        /// The inboxes the prepare phase looks at before the loop polls.
        var unsettled: [ObjectIdentifier] = []
        /// `LoopEngine.settleInboxes()`'s second buffer, empty between calls.
        var spareUnsettled: [ObjectIdentifier] = []
        /// An unsettled inbox still has messages coming: the idle handle keeps the poll
        /// non-blocking.
        var isBusy = false
    }

    /// Read on every turn (`isBusy`, `unsettled`, the waiting count): in `HeapStorage`, not
    /// stored `var`s, so that a turn pays no run-time exclusivity check. No access is held across
    /// user code: `closeAll` and `settleInboxes` take their lists out first, and an entry's
    /// counts run none.
    private let state = HeapStorage(State())

    private var open: [ObjectIdentifier: InboxEntry] {
        _read { yield state.value.open }
        _modify { yield &state.value.open }
    }

    var unsettled: [ObjectIdentifier] {
        _read { yield state.value.unsettled }
        _modify { yield &state.value.unsettled }
    }

    var spareUnsettled: [ObjectIdentifier] {
        _read { yield state.value.spareUnsettled }
        _modify { yield &state.value.spareUnsettled }
    }

    var isBusy: Bool {
        _read { yield state.value.isBusy }
        _modify { yield &state.value.isBusy }
    }

    subscript(key: ObjectIdentifier) -> InboxEntry? { open[key] }

    func add(_ key: ObjectIdentifier, _ entry: InboxEntry) { open[key] = entry }

    /// Forgets an inbox that has closed.
    func remove(_ key: ObjectIdentifier) { open[key] = nil }

    /// Whether messages may wait in some inbox.
    var hasWaiting: Bool { open.values.contains { $0.hasWaiting() } }

    /// The messages sent to the inboxes and not yet delivered.
    /// Read at the end of every turn (`recordTurnEnd`): with no inbox open, that is one check.
    var waitingCount: Int {
        if open.isEmpty { return 0 }
        return open.values.reduce(0) { $0 + $1.waitingCount() }
    }

    /// Closes every inbox (each runs its final drain and closes its wake handle): what the loop's
    /// shutdown and detach need. Senders get ``LoopError/shutDown`` or ``LoopError/detached``
    /// from then on.
    func closeAll() {
        let entries = open.values
        open.removeAll()
        for inbox in entries { inbox.close() }
        unsettled.removeAll()
        isBusy = false
    }
}
