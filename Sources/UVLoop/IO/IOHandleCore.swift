/// What a libuv handle (or request) must offer to live on a loop as an I/O handle.
protocol NativeIOHandle {
    /// Closes the handle; libuv frees its memory after the close callback. Closing twice does
    /// nothing.
    func close()
    /// Lets the handle stop keeping the loop alive on its own (`uv_unref`).
    func unref()
}

/// The loop-thread side of one I/O handle, whatever its kind: what every kind shares, written
/// once. Loop thread only.
///
/// - It opens under the loop's admission (`LoopLifecycle.admitHandle`): a loop that is shutting
///   down, shut down, detaching or detached refuses it with its one refusal.
/// - Once its libuv handle exists (`open(_:keepsOwnerLoopAlive:)`), it is recorded in the loop's
///   open handles (`LoopIOHandles`), which close it at shutdown and detach; on a loop that C code
///   owns it is unreferenced unless it must keep the owner's loop alive.
/// - It closes exactly once (`close(reason:)`): by its user, by an error that ends it, or by the
///   loop's ending; `closeReason` says which, and the kind's `didClose(reason:)` runs then. A
///   close by the loop's ending calls no user code synchronously (it may post, or resume a task).
/// - Its memory is freed only after libuv's close callback (the native handle's rule), and the
///   core lets go of `handle` when it closes: touch `handle` only while the core is open. (A
///   request's glue holds its completion, which may hold the core: letting go breaks that cycle.)
/// - libuv's callbacks run as the loop's own (`asLoopCallback`): a detach or shutdown asked for
///   inside one finishes when it returns, and work it queued gets the idle handle it needs.
/// - What an async face hands to a waiting task goes through `LoopContinuation`, which tells
///   ThreadSanitizer about the hand-off (the concurrency runtime's own atomics are invisible to it).
///
/// A kind subclasses it with its own state and verbs: `SignalWatchCore`, `DescriptorWatchCore`,
/// `StreamConnectionCore`, `StreamListenerCore`, `NameLookupCore`. See "Adding a handle kind" in
/// ARCHITECTURE.md. It is a `HandleContext`, so that a kind may be its own handle's context
/// (what the handle's `data` field holds) instead of allocating one beside it, as the streams'
/// cores are (`StreamCore`).
class IOHandleCore<Native: NativeIOHandle>: LoopIOHandle {
    let loop: Loop
    /// Read (`handle`) and replaced (`open`, `close`, `endedByItself`) in whole, never passed
    /// `inout`, on the loop's thread only: no two accesses can overlap, so it goes without the
    /// run-time exclusivity check, which the optimizer cannot remove by itself for a class
    /// property reached through the loop's record of handles, and which would otherwise cost
    /// every stream write a `swift_beginAccess` call.
    @exclusivity(unchecked) private var native: Native?
    /// Where the loop's record of open handles keeps this one (see `LoopIOHandles`). 32 bits:
    /// it then fits the padding after `native` (a stream handle's 17 bytes), which keeps every
    /// core a word smaller.
    private var storedRegistryIndex: Int32 = -1
    /// Why the handle closed, kept in one word (see `CloseState`): every open handle carries it.
    private var closeState = CloseState.open

    /// Admits a new handle on `loop`. Loop thread only.
    /// - Throws: the loop's refusal once it no longer accepts handles.
    init(loop: Loop) throws(LoopError) {
        try loop.lifecycle.admitHandle()
        self.loop = loop
        super.init()
    }

    /// The libuv handle, from `open(_:keepsOwnerLoopAlive:)` until the core closes: libuv frees
    /// it after closing.
    final var handle: Native {
        guard let native else {
            preconditionFailure("UVLoop internal error: an I/O handle used before it was opened or after it closed")
        }
        return native
    }

    /// Why the handle closed: ``LoopError/streamClosed`` when its user closed it, the loop's
    /// refusal (``LoopError/shutDown``, ``LoopError/detached``) at the loop's ending, or the
    /// error that ended it. Nil while open.
    final var closeReason: LoopError? { closeState.reason }

    final var isOpen: Bool { closeState.isOpen }

    /// Takes the libuv handle just created for this core: unreferences it on a loop that C code
    /// owns unless `keepsOwnerLoopAlive`, and records it in the loop's open handles.
    final func open(_ native: Native, keepsOwnerLoopAlive: Bool) {
        self.native = native
        if !keepsOwnerLoopAlive && !loop.native.isOwned { native.unref() }
        loop.engine.ioHandles.register(self)
    }

    /// Closes the handle, once: forgets it in the loop's record, closes the libuv handle
    /// (`closeNative`), then lets the kind finish (`didClose(reason:)`).
    /// - Returns: whether this call closed it (false when it had closed already).
    @discardableResult
    final func close(reason: LoopError) -> Bool {
        guard closeState.isOpen else { return false }
        closeState = CloseState(reason)
        loop.engine.ioHandles.unregister(self)
        if let native { closeNative(native) }
        native = nil
        didClose(reason: reason)
        return true
    }

    /// The native handle ended by itself (a request that completed): forgets it in the loop's
    /// record without closing it. Nothing happens if it was closed already.
    final func endedByItself() {
        guard closeState.isOpen else { return }
        closeState = .byUser
        loop.engine.ioHandles.unregister(self)
        native = nil
    }

    override final var registryIndex: Int32 { storedRegistryIndex }

    override final func setRegistryIndex(_ index: Int32) { storedRegistryIndex = index }

    /// Closes the handle at the loop's shutdown or detach, with the loop's refusal as the reason.
    override final func closeForLoopEnding() { close(reason: loop.lifecycle.refusal) }

    /// How the libuv handle closes; a kind overrides it for another way (a stream's reset).
    func closeNative(_ native: Native) { native.close() }

    /// What the kind does once closed: release handlers, fail what waits. Called once, from
    /// `close(reason:)`.
    func didClose(reason: LoopError) {}

    /// Runs `body`, the Swift side of one of the handle's libuv callbacks, as the loop's own
    /// callbacks run theirs (see `LoopEngine.runIOCallback`).
    @inline(__always)
    final func asLoopCallback(_ body: () -> Void) {
        loop.engine.runIOCallback(body)
    }

    /// Runs `body` like ``asLoopCallback(_:)``, for a callback that reports readiness rather than
    /// I/O done: readiness repeats every turn while a descriptor stays ready (writable, say), so a
    /// stepped loop (`Loop.runUntilIdle`) must not take it for I/O still settling.
    final func asReadinessCallback(_ body: () -> Void) {
        loop.engine.runAsCallback(body)
    }
}

/// Whether an I/O handle is open, and why it closed, in one word instead of a `LoopError?`'s
/// several: the reasons nearly every handle closes for (its user, the loop's shutdown or detach)
/// are cases of their own, and only another error (a reset, a failed read) is boxed, an
/// allocation made when a handle ends that way.
private enum CloseState {
    case open
    case byUser
    case shutDown
    case detached
    indirect case other(LoopError)

    init(_ reason: LoopError) {
        switch reason {
        case .streamClosed: self = .byUser
        case .shutDown: self = .shutDown
        case .detached: self = .detached
        default: self = .other(reason)
        }
    }

    var isOpen: Bool {
        if case .open = self { return true }
        return false
    }

    var reason: LoopError? {
        switch self {
        case .open: nil
        case .byUser: .streamClosed
        case .shutDown: .shutDown
        case .detached: .detached
        case .other(let reason): reason
        }
    }
}

extension Loop {
    /// Runs `open`, which opens a handle's core, on the loop's thread: at once when called there,
    /// otherwise through a blocking `invoke` (in order with the calling thread's posts), so that
    /// the caller gets the handle open, or the error, when this returns.
    func openHandle(_ open: @escaping @Sendable () throws(LoopError) -> Void) throws(LoopError) {
        if isOnLoopThread { return try open() }
        try invoke { Result { () throws(LoopError) in try open() } }.get()
    }
}
