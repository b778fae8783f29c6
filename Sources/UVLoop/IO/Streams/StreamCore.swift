/// What the cores of a connection and of a listener share: each is the Swift side of its own
/// libuv stream handle. The handle's `data` field holds the core (retained) from
/// `StreamHandle.init` until libuv's close callback, so that libuv's callbacks reach it with one
/// load, and it lives as long as libuv may call it; no other object stands between them. It
/// reaches what those callbacks need: the loop's read buffer (through the loop), the simulated
/// socket of a simulated stream and the descriptor a stream was opened on (`origin`, which each
/// kind keeps where it likes). Loop thread only.
///
/// The kinds override what libuv reports (`streamDidRead(_:)` and the rest); each report comes
/// on the loop's thread, from a libuv callback (or the simulated network's delivery).
class StreamCore: IOHandleCore<StreamHandle> {
    /// Where the stream came from when not from libuv's own calls: a simulated network's socket,
    /// or a descriptor someone else opened (a stream is never both). Kept by each kind: a
    /// connection keeps it among what only some connections use, as nearly all have neither.
    var origin: StreamOrigin? {
        get { preconditionFailure("UVLoop internal error: StreamCore.origin not overridden") }
        set { preconditionFailure("UVLoop internal error: StreamCore.origin not overridden") }
    }

    /// The simulated socket of a stream of a simulated network's host: kept until libuv's close
    /// callback, which tells it first (`SimulatedStream.finishClosing`).
    var simulated: SimulatedStream? {
        get {
            if case .simulated(let simulated) = origin { return simulated }
            return nil
        }
        set {
            if let newValue { origin = .simulated(newValue) } else if simulated != nil { origin = nil }
        }
    }

    /// The descriptor the stream was opened on, when it was (`StreamHandle.init(opening:...)`).
    var openedDescriptor: OpenedDescriptor? {
        get {
            if case .descriptor(let opened) = origin { return opened }
            return nil
        }
        set {
            if let newValue { origin = .descriptor(newValue) } else if openedDescriptor != nil { origin = nil }
        }
    }

    /// Admits a stream on `loop`; the kind opens its handle next (`openStream`).
    override init(loop: Loop) throws(LoopError) {
        loop.streamReadBuffer.value.allocateIfNeeded()
        try super.init(loop: loop)
    }

    // MARK: what libuv reports

    /// `bytes` were read into the loop's read buffer; valid only during the call.
    func streamDidRead(_ bytes: UnsafeRawBufferPointer) {}
    /// Reading ended: `UV_EOF` (the peer shut down its writes) or an error; libuv stopped reading.
    func streamReadDidEnd(_ status: Int32) {}
    /// A listener has a connection to accept (`status` 0), or accepting failed.
    func streamConnectionIsReady(_ status: Int32) {}
    /// A queued write finished with `status` (0, an error, or `UV_ECANCELED` when the handle was
    /// closed first); `byteCount` bytes had been queued.
    func streamWriteDidFinish(byteCount: Int, completion: ((LoopError?) -> Void)?, status: Int32) {}
    /// libuv is done with the handle (its close callback); its memory is freed right after.
    func streamDidClose() {}

    /// libuv's close callback: the simulated socket finishes first (it reports its writes as
    /// libuv would), then the kind hears of it. The handle lets go of this core right after.
    override final func handleDidClose() {
        if let simulated {
            simulated.finishClosing()
            simulated.core = nil
            self.simulated = nil
        }
        streamDidClose()
    }

    // MARK: write requests

    /// A request for a queued write: a finished one of the loop's streams if one is kept (see
    /// `LoopIOHandles.freeStreamWrites`), else a new one.
    func takeWriteRequest() -> StreamWriteRequest {
        loop.engine.ioHandles.takeStreamWrite()
    }

    /// Keeps a finished request for the next queued write of any stream on the loop.
    func recycle(_ request: StreamWriteRequest) {
        loop.engine.ioHandles.recycleStreamWrite(request)
    }

    // MARK: opening

    /// Creates the stream handle of this connection or listener and records it with the loop. A
    /// stream keeps an owner's loop alive, as the owner's own streams do.
    final func openStream(_ kind: StreamHandle.Kind, socketFamily: Int32?) throws(LoopError) {
        BrokenPipeSignal.ignoreUnlessHandled()
        let opened = try StreamHandle(kind, loop: loop.native, core: self, socketFamily: socketFamily)
        open(opened, keepsOwnerLoopAlive: true)
    }

    /// Creates the handle of a stream of a simulated network's host (see `SimulatedStream`).
    final func openSimulatedStream(_ simulated: SimulatedStream) throws(LoopError) {
        let opened = try StreamHandle(simulated: simulated, loop: loop.native, core: self)
        open(opened, keepsOwnerLoopAlive: true)
    }
}

/// Where a stream came from, for the few that did not come from libuv's own calls (see
/// `StreamCore.origin`).
enum StreamOrigin {
    case simulated(SimulatedStream)
    case descriptor(OpenedDescriptor)
}
