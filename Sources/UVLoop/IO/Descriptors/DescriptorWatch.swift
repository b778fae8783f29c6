import Synchronization

/// A watch of a file descriptor that someone else opened (the socket of a C library such as
/// c-ares, libpq or libcurl's multi interface): its handler runs on the loop's thread whenever the
/// descriptor is ready for what the watch waits for. Create one with
/// ``Loop/watchDescriptor(_:for:keepsOwnerLoopAlive:handler:)``.
///
/// ```swift
/// let received = LoopBound([UInt8](), loop: loop)
/// let watch = try loop.watchDescriptor(socket, for: .readable) { watch, readiness in
///     guard case .success(let events) = readiness, events.contains(.readable) else { return }
///     var byte: UInt8 = 0
///     while read(watch.descriptor, &byte, 1) == 1 {   // until EAGAIN: it is non-blocking now
///         received.value.append(byte)
///     }
/// }
/// watch.update([.readable, .writable])   // wait for room to write, too
/// ```
///
/// When the library is done with the socket:
///
/// ```swift
/// watch.cancel()
/// close(socket)      // yours to close, once the watch has ended
/// ```
///
/// ## Readiness, not data
/// The handler is told that a read or write would not block *now*. Readiness can be spurious
/// (another reader took the data first, or the kernel reports an event that comes to nothing), so
/// reads and writes must expect `EAGAIN` and wait for the next call. Readiness is level-triggered:
/// while the descriptor stays readable (nobody reads it), the handler is called again on every
/// turn of the loop. Read until `EAGAIN`, or ``update(_:)`` the watch to stop waiting for what
/// you cannot handle yet.
///
/// ## The descriptor
/// - libuv switches the descriptor to non-blocking mode when the watch starts (`O_NONBLOCK`, set
///   with `ioctl(FIONBIO)`) and leaves it so when the watch ends; a library that hands over its
///   sockets already uses them that way.
/// - UVLoop never closes a descriptor it did not open: ``cancel()``, the loop's shutdown and
///   ``Loop/detach()`` stop watching and leave it open. Close it yourself, after the watch has
///   ended: closing a descriptor while it is watched makes the kernel drop it from the loop
///   silently, and a new descriptor that reuses its number is then mistaken for it.
/// - One loop watches a descriptor once: a second watch of it on the same loop (or a descriptor
///   that a handle of the loop's owner polls) throws ``LoopError/invalidArgument(_:)``. Change
///   what the one watch waits for with ``update(_:)``.
///
/// ## Threads and order
/// The handle is usable from any thread. The handler runs on the loop's thread. The watch stays
/// open until ``cancel()``, until an error ends it (its handler gets the error, once), or until
/// the loop shuts down or is detached. Dropping the handle changes nothing. An open watch keeps
/// its loop and what its handler captured alive.
public final class DescriptorWatch: Sendable {
    /// The loop whose thread runs the handler.
    public let loop: Loop
    /// The watched descriptor.
    public let descriptor: Int32

    private let interest: Atomic<UInt8>
    private let ended = Atomic<Bool>(false)
    /// Loop thread only: the open handle and the handler, while the watch is open.
    let core = LoopConfined<DescriptorWatchCore?>(nil)
    /// Loop thread only: the handler, until the watch opens.
    private let handler: LoopConfined<(@Sendable (DescriptorWatch, Result<DescriptorEvents, LoopError>) -> Void)?>
    /// The async face: the handle polls only while its consumer waits.
    let channel: IOEventChannel<DescriptorEvents>?

    init(
        loop: Loop, descriptor: Int32, events: DescriptorEvents,
        handler: (@Sendable (DescriptorWatch, Result<DescriptorEvents, LoopError>) -> Void)?,
        channel: IOEventChannel<DescriptorEvents>? = nil
    ) {
        self.loop = loop
        self.descriptor = descriptor
        self.interest = Atomic(events.rawValue)
        self.handler = LoopConfined(handler)
        self.channel = channel
    }

    /// What the watch waits for: given at creation, changed with ``update(_:)``. Callable from any
    /// thread.
    public var events: DescriptorEvents { DescriptorEvents(rawValue: interest.load(ordering: .relaxed)) }

    /// Whether the watch is open: not cancelled, not ended by an error, and its loop not shut down
    /// or detached. Callable from any thread.
    public var isActive: Bool { !ended.load(ordering: .acquiring) }

    /// Changes what the watch waits for. Callable from any thread.
    ///
    /// On the loop's thread the change is made before this returns: the handler is not called for
    /// events no longer asked for. From another thread it travels to the loop like a post, in
    /// order with the calling thread's other posts; a call already on its way to the handler may
    /// still report the old events. An empty set pauses the watch (it keeps the descriptor, and
    /// ``update(_:)`` resumes it).
    /// - Parameter events: what to wait for from now on.
    /// - Returns: `false` if the watch has ended, so there was nothing to change; otherwise `true`.
    @discardableResult
    public func update(_ events: DescriptorEvents) -> Bool {
        guard isActive else { return false }
        interest.store(events.rawValue, ordering: .relaxed)
        if loop.isOnLoopThread {
            core.value?.applyInterest()
        } else {
            do {
                try loop.post { [self] in core.value?.applyInterest() }
            } catch {
                return false
            }
        }
        return true
    }

    /// Ends the watch; the descriptor stays open. Callable from any thread; idempotent.
    ///
    /// On the loop's thread the handler is never called again once this returns, and it is
    /// released at once. From another thread the handler is not called for readiness that the
    /// loop handles after this call (a call running at this moment on the loop's thread
    /// finishes); the loop stops polling the descriptor, and releases the handler, on its next
    /// turn: close the descriptor only after that (for example from a closure posted after this
    /// call).
    /// - Returns: `true` if this call ended the watch; `false` if it had already ended.
    @discardableResult
    public func cancel() -> Bool {
        guard end() else { return false }
        channel?.finish()
        // Refused only once the loop has begun shutting down or detaching, which closes every
        // open watch, this one included.
        _ = loop.onLoopThread { [self] in core.value?.close(reason: .streamClosed) }
        return true
    }

    /// Marks the watch ended, once. Any thread.
    fileprivate func end() -> Bool {
        !ended.exchange(true, ordering: .acquiringAndReleasing)
    }

    // MARK: the loop's side

    /// Opens the libuv handle and starts polling. Loop thread only.
    func start(keepsOwnerLoopAlive: Bool) throws(LoopError) {
        let opened = try DescriptorWatchCore(watch: self, handler: handler.value, keepsOwnerLoopAlive: keepsOwnerLoopAlive)
        handler.value = nil
        core.value = opened
        opened.applyInterest()
    }

    static func notOpen(_ descriptor: Int32) -> LoopError {
        .invalidArgument(
            "descriptor \(descriptor) is not open; watch a descriptor while it is open, and close it only after the watch has ended")
    }

    /// The async face's consumer began to wait: poll for it. Any thread.
    func consumerWaits() {
        if loop.isOnLoopThread {
            core.value?.applyInterest()
        } else {
            // Refused only once the loop has begun shutting down or detaching, which ends the
            // sequence.
            try? loop.post { [self] in core.value?.applyInterest() }
        }
    }
}

/// The loop-thread side of a ``DescriptorWatch``: its `uv_poll_t`, what it polls for, and its
/// handler. Loop thread only.
final class DescriptorWatchCore: IOHandleCore<PollHandle> {
    /// The public watch; released (with the handler) when the watch closes.
    private var watch: DescriptorWatch?
    private var handler: (@Sendable (DescriptorWatch, Result<DescriptorEvents, LoopError>) -> Void)?
    /// The events the handle polls for now (libuv's bits).
    private var polling: Int32 = 0
    private let descriptor: Int32

    init(
        watch: DescriptorWatch, handler: (@Sendable (DescriptorWatch, Result<DescriptorEvents, LoopError>) -> Void)?,
        keepsOwnerLoopAlive: Bool
    ) throws(LoopError) {
        self.watch = watch
        self.handler = handler
        self.descriptor = watch.descriptor
        try super.init(loop: watch.loop)
        let ioHandles = loop.engine.ioHandles
        guard !ioHandles.watchedDescriptors.contains(descriptor) else { throw alreadyWatched }
        let opened: PollHandle
        do {
            opened = try PollHandle(loop: loop.native, descriptor: descriptor)
        } catch {
            guard case .libuv(_, let code) = error else { throw error }
            switch code {
            case PollHandle.alreadyWatched: throw alreadyWatched
            case PollHandle.notOpen: throw DescriptorWatch.notOpen(descriptor)
            case PollHandle.notPollable:
                throw LoopError.invalidArgument(
                    "descriptor \(descriptor) cannot be watched for readiness: the kernel cannot poll what it refers to (a regular file, a directory, /dev/null), which is always ready; read or write it directly, or on the thread pool")
            default: throw error
            }
        }
        opened.onEvent { [unowned self] status, events in asReadinessCallback { ready(status: status, events: events) } }
        ioHandles.watchedDescriptors.insert(descriptor)
        open(opened, keepsOwnerLoopAlive: keepsOwnerLoopAlive)
    }

    private var alreadyWatched: LoopError {
        .invalidArgument(
            "descriptor \(descriptor) is already watched on this loop (libuv polls a descriptor once per loop, and the loop or its owner polls this one); change what the existing watch waits for with update(_:), or cancel it first")
    }

    /// Polls for what is asked for now: the interest, and for an async face only while its
    /// consumer waits.
    func applyInterest() {
        guard isOpen, let watch, watch.isActive else { return }
        let waiting = watch.channel.map { $0.hasWaiter } ?? true
        let wanted = waiting ? watch.events.libuvEvents : 0
        guard wanted != polling else { return }
        let status = handle.start(wanted)
        guard status == 0 else {
            fail(LoopError.libuv(status, "uv_poll_start"))
            return
        }
        polling = wanted
    }

    /// Whether libuv polls the descriptor now (for tests).
    var isPolling: Bool { isOpen && handle.isActive }

    /// libuv's poll callback, in the loop's poll phase.
    private func ready(status: Int32, events: Int32) {
        guard status == 0 else {
            // libuv has stopped the handle (the kernel reported an error condition).
            polling = 0
            fail(LoopError.libuv(status, "uv_poll (descriptor \(descriptor))"))
            return
        }
        guard let watch, watch.isActive else { return }
        let ready = DescriptorEvents(libuvEvents: events).intersection(watch.events)
        guard !ready.isEmpty else { return }
        if let channel = watch.channel {
            channel.deliver(ready)
            applyInterest()
        } else if let handler {
            handler(watch, .success(ready))
        }
    }

    /// Ends the watch with `error`, which the handler (or the async face's consumer) gets once.
    private func fail(_ error: LoopError) {
        guard let watch, watch.end() else { return }
        let handler = handler
        close(reason: error)
        if watch.channel == nil { handler?(watch, .failure(error)) }
    }

    override func didClose(reason: LoopError) {
        loop.engine.ioHandles.watchedDescriptors.remove(descriptor)
        if let watch {
            _ = watch.end()
            // An error that ended the watch is its sequence's failure; a cancel or the loop's
            // ending ends the sequence quietly.
            let failed = reason != .streamClosed && reason != loop.lifecycle.refusal
            watch.channel?.finish(failing: failed ? reason : nil)
            watch.core.value = nil
        }
        watch = nil
        handler = nil
    }
}
