import Synchronization

/// One suspended call of a stream's async face (a read, a write, an accept, a connect): whether
/// its task was cancelled. The cancellation handler sets it on any thread, then asks the loop's
/// thread to resume the call; the loop's thread checks it before suspending the call, so a
/// cancel that arrives first is never missed.
final class StreamWaiter: Sendable {
    private let cancelled = Atomic<Bool>(false)

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func markCancelled() { cancelled.store(true, ordering: .releasing) }
}
