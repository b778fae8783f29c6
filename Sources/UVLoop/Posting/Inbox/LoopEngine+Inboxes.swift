extension LoopEngine {
    /// An inbox's wake-up delivered messages and left its wake-pending flag set: the prepare phase
    /// settles it before the loop polls, and until then no poll blocks.
    func inboxDelivered(_ key: ObjectIdentifier, _ settling: InboxSettling) {
        switch settling {
        case .settled:
            break
        case .busy:
            keepUnsettled(key)
        case .closed:
            inboxes[key]?.close()
        }
    }

    /// Looks at each unsettled inbox right before the loop polls. One whose senders keep sending
    /// keeps its flag set and keeps the poll non-blocking, so that a stream of sends costs the
    /// senders no wake-ups; one found empty clears its flag and lets the poll block (the idle
    /// handle stops here when nothing else wants it). Receivers run here as they do in a wake-up.
    func settleInboxes() {
        // Receivers may close inboxes or make new ones: work on the list taken out, and keep its
        // buffer for the next turn (no allocation per turn).
        var keys: [ObjectIdentifier] = []
        swap(&keys, &inboxes.spareUnsettled)
        swap(&keys, &inboxes.unsettled)
        defer {
            keys.removeAll(keepingCapacity: true)
            swap(&keys, &inboxes.spareUnsettled)
        }
        inboxes.isBusy = false
        var index = 0
        while index < keys.count {
            let key = keys[index]
            index += 1
            guard !lifecycle.handlesClosed, let inbox = inboxes[key] else { continue }
            switch inbox.settle() {
            case .settled:
                break
            case .busy:
                keepUnsettled(key)
            case .closed:
                inbox.close()
            }
        }
        if !lifecycle.handlesClosed { updateHandles() }
    }

    /// The inbox's flag stays set: it is looked at in the next prepare phase, and no poll blocks
    /// before then.
    private func keepUnsettled(_ key: ObjectIdentifier) {
        inboxes.isBusy = true
        startIdle()
        if !inboxes.unsettled.contains(key) { inboxes.unsettled.append(key) }
    }
}
