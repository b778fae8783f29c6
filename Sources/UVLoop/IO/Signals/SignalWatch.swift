import Synchronization

/// A watch of one signal on a ``Loop``: each delivery of the signal to the process calls its
/// handler on the loop's thread. Create one with
/// ``Loop/watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)``; end it with ``cancel()``.
///
/// ```swift
/// let reloads = LoopBound(0, loop: loop)
/// let watch = try loop.watchSignal(.hangup) { _ in
///     reloads.value += 1                  // on the loop's thread: reload the configuration
/// }
/// // ... later, from any thread:
/// watch.cancel()
/// ```
///
/// ## The whole process
/// A signal's action belongs to the process, not to a loop. While at least one watch of a
/// signal is open (on any loop), the signal no longer has its default action: a watched
/// `SIGTERM` or `SIGINT` no longer ends the process, it calls the handlers. When the last watch
/// of the signal in the process ends, the default action comes back (`SIG_DFL`), whatever action
/// the process had installed before the first watch (an ignored `SIGPIPE` is no longer ignored).
///
/// ## Deliveries
/// Every open watch of the signal gets every delivery, on its own loop's thread: several watches
/// on one loop, and watches on several loops. The kernel merges sends of a signal that arrive
/// before the process has taken the previous one, so count deliveries, not sends. The handler
/// runs in the loop's poll phase, like other I/O, never inside the C signal handler: it may do
/// anything a posted closure may do.
///
/// ## Threads and order
/// The handle is usable from any thread. The handler runs on the loop's thread, one delivery at
/// a time, in the order the process received them. Dropping the handle changes nothing: the
/// watch stays open until ``cancel()``, until its one delivery (``isOneShot``), or until the loop
/// shuts down or is detached. An open watch keeps its loop and what its handler captured alive.
public final class SignalWatch: Sendable {
    /// The loop whose thread runs the handler.
    public let loop: Loop
    /// The watched signal.
    public let signal: Signal
    /// Whether the watch ends at its first delivery.
    public let isOneShot: Bool

    private let ended = Atomic<Bool>(false)
    /// Loop thread only: the open handle and the handler, while the watch is open.
    let core = LoopConfined<SignalWatchCore?>(nil)
    /// Loop thread only: the handler, until the watch opens.
    private let handler: LoopConfined<(@Sendable (SignalWatch) -> Void)?>
    /// Runs once the watch has ended, on any thread (ends an async face's sequence).
    private let onEnd: (@Sendable () -> Void)?

    init(
        loop: Loop, signal: Signal, oneShot: Bool, handler: @escaping @Sendable (SignalWatch) -> Void,
        onEnd: (@Sendable () -> Void)? = nil
    ) {
        self.loop = loop
        self.signal = signal
        self.isOneShot = oneShot
        self.handler = LoopConfined(handler)
        self.onEnd = onEnd
    }

    /// Whether the watch is open: not cancelled, not ended by its one delivery, and its loop not
    /// shut down or detached. Callable from any thread.
    public var isActive: Bool { !ended.load(ordering: .acquiring) }

    /// Ends the watch. Callable from any thread; idempotent.
    ///
    /// On the loop's thread the handler is never called again once this returns, and it is
    /// released at once. From another thread the handler is not called for a delivery that the
    /// loop handles after this call (one running at this moment on the loop's thread finishes),
    /// and it is released on the loop's next turn. If this was the last watch of the signal in the
    /// process, the signal's default action comes back (from another thread: on the loop's next
    /// turn).
    /// - Returns: `true` if this call ended the watch; `false` if it had already ended
    ///   (cancelled, its one delivery made, or its loop shut down or detached).
    @discardableResult
    public func cancel() -> Bool {
        guard end() else { return false }
        // Refused only once the loop has begun shutting down or detaching, which closes every
        // open watch, this one included.
        _ = loop.onLoopThread { [self] in core.value?.close(reason: .streamClosed) }
        return true
    }

    /// Marks the watch ended, once, and tells the async face. Any thread.
    fileprivate func end() -> Bool {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        onEnd?()
        return true
    }

    // MARK: the loop's side

    /// Opens the libuv handle and starts watching. Loop thread only.
    func start(keepsOwnerLoopAlive: Bool) throws(LoopError) {
        guard let handler = handler.value else { return }
        let opened = try SignalWatchCore(watch: self, handler: handler, keepsOwnerLoopAlive: keepsOwnerLoopAlive)
        self.handler.value = nil
        core.value = opened
    }
}

/// The loop-thread side of a ``SignalWatch``: its `uv_signal_t` and its handler. Loop thread only.
final class SignalWatchCore: IOHandleCore<SignalHandle> {
    /// The public watch; released (with the handler) when the watch closes.
    private var watch: SignalWatch?
    private var handler: (@Sendable (SignalWatch) -> Void)?

    init(watch: SignalWatch, handler: @escaping @Sendable (SignalWatch) -> Void, keepsOwnerLoopAlive: Bool) throws(LoopError) {
        self.watch = watch
        self.handler = handler
        try super.init(loop: watch.loop)
        let opened = try SignalHandle(loop: loop.native)
        let status = opened.start(watch.signal.number, oneShot: watch.isOneShot)
        guard status == 0 else {
            opened.close()
            throw LoopError.libuv(status, watch.isOneShot ? "uv_signal_start_oneshot" : "uv_signal_start")
        }
        opened.onSignal { [unowned self] in asLoopCallback { delivered() } }
        open(opened, keepsOwnerLoopAlive: keepsOwnerLoopAlive)
    }

    /// A delivery, in the loop's poll phase.
    private func delivered() {
        guard let watch, let handler, watch.isActive else { return }
        if watch.isOneShot {
            guard watch.end() else { return }
            handler(watch)
            close(reason: .streamClosed)
        } else {
            handler(watch)
        }
    }

    override func didClose(reason: LoopError) {
        // Ended by the loop (shutdown, detach): the watch learns it here.
        _ = watch?.end()
        watch?.core.value = nil
        watch = nil
        handler = nil
    }
}
