import Synchronization

/// A name lookup in progress (``Loop/resolve(host:port:_:)``): cancel it, or ask whether it is
/// still pending. Usable from any thread; every method is idempotent.
///
/// A lookup ends in exactly one of two ways, decided atomically: its completion runs (with the
/// addresses or an error), or it is cancelled and its completion never runs.
public final class NameLookup: Sendable {
    /// The loop whose thread runs the completion.
    public let loop: Loop
    private static let pending: UInt8 = 0, finished: UInt8 = 1, cancelled: UInt8 = 2
    private let status = Atomic<UInt8>(NameLookup.pending)
    let box: LoopConfinedObject<NameLookupCore>

    init(loop: Loop, core: NameLookupCore) {
        self.loop = loop
        box = LoopConfinedObject(core)
    }

    /// Whether the completion may still run: neither run nor cancelled. Callable from any thread.
    public var isPending: Bool { status.load(ordering: .acquiring) == Self.pending }

    /// Cancels the lookup. Callable from any thread.
    ///
    /// Returns `true` exactly when this call kept the completion from running: after a `true`
    /// it never runs, and what it captured is released (at once on the loop's thread, otherwise
    /// on the loop's next turn). A lookup that has not started yet gives its thread-pool slot
    /// back; one already running finishes there, and its result is dropped.
    /// - Returns: whether this call prevented the completion.
    @discardableResult
    public func cancel() -> Bool {
        guard claim(as: Self.cancelled) else { return false }
        let box = box
        _ = loop.onLoopThread { box.value.cancel() }
        return true
    }

    /// Moves the lookup from pending to `outcome`; false when something else ended it first.
    func claim(as outcome: UInt8) -> Bool {
        status.compareExchange(expected: Self.pending, desired: outcome, ordering: .acquiringAndReleasing).exchanged
    }

    /// Ends the lookup with `result` unless it was cancelled.
    func finish(_ result: Result<[SocketAddress], LoopError>) {
        let core = box.value
        guard claim(as: Self.finished) else { return core.complete(nil) }
        core.complete(result)
    }
}

/// The loop-thread part of a ``NameLookup``: libuv's request and the completion. Loop thread only.
///
/// A lookup is a request, not a handle: closing it withdraws it (`uv_cancel`), and libuv's
/// callback still comes, reporting the loop's refusal when the loop's ending closed it.
final class NameLookupCore: IOHandleCore<AddressLookupRequest> {
    private var completion: ((Result<[SocketAddress], LoopError>) -> Void)?

    init(loop: Loop, completion: @escaping (Result<[SocketAddress], LoopError>) -> Void) throws(LoopError) {
        self.completion = completion
        try super.init(loop: loop)
    }

    /// The lookup was cancelled: withdraw the request and drop the completion.
    func cancel() {
        completion = nil
        close(reason: .streamClosed)
    }

    /// libuv is done with the request: forgets it, and calls the completion with `result` (nil
    /// for a lookup that was cancelled).
    func complete(_ result: Result<[SocketAddress], LoopError>?) {
        let completion = completion
        self.completion = nil
        endedByItself()
        if let result { completion?(result) }
    }
}
