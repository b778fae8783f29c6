/// What only some connections use: a writability handler, pipes, a framed reader's resumer, a
/// flushing close, a file transfer and the bytes it holds, the simulated socket or the descriptor
/// opened by others that the connection is on (`StreamCore.origin`), a read buffer limit and
/// water marks other than the defaults (read only when the async face starts, and when writes
/// queue or finish, never on a write the kernel takes at once). Kept out of `StreamConnectionCore` and
/// made on first use, so that the many connections that use none of it (an idle one, an echo
/// served by a read handler or by the async face) do not carry it. Loop thread only.
final class StreamConnectionExtras {
    var writableHandler: ((StreamConnection) -> Void)?
    var readResumer: ((StreamConnectionCore) -> Void)?
    var incomingPipe: StreamPipeCore?
    var outgoingPipe: StreamPipeCore?
    var flushingClose: FlushingClose?
    var pendingFlushCompletions: (CompletionList, Bool)?
    var fileTransfer: StreamFileTransfer?
    var heldWriteBytes = 0
    var origin: StreamOrigin?
    var readBufferLimit = StreamConnectionExtras.defaultReadBufferLimit
    var lowWaterMark = StreamConnectionExtras.defaultLowWaterMark
    var highWaterMark = StreamConnectionExtras.defaultHighWaterMark

    /// How many bytes the async face buffers before it stops reading, unless set.
    static let defaultReadBufferLimit = 64 * 1024
    /// The write queue's water marks, unless set.
    static let defaultLowWaterMark = 32 * 1024
    static let defaultHighWaterMark = 64 * 1024
}

// Each of these reads nil (or 0) without making `extras`, and storing nil (or 0) into a
// connection that has none makes none.
extension StreamConnectionCore {
    var madeExtras: StreamConnectionExtras {
        if let extras { return extras }
        let made = StreamConnectionExtras()
        extras = made
        return made
    }

    var writableHandler: ((StreamConnection) -> Void)? {
        get { extras?.writableHandler }
        set { if newValue != nil || extras != nil { madeExtras.writableHandler = newValue } }
    }

    /// Resumes a framed reader, which first delivers the frames it kept while paused.
    var readResumer: ((StreamConnectionCore) -> Void)? {
        get { extras?.readResumer }
        set { if newValue != nil || extras != nil { madeExtras.readResumer = newValue } }
    }

    /// The pipe that writes into this connection.
    var incomingPipe: StreamPipeCore? {
        get { extras?.incomingPipe }
        set { if newValue != nil || extras != nil { madeExtras.incomingPipe = newValue } }
    }

    /// The pipe that reads from this connection.
    var outgoingPipe: StreamPipeCore? {
        get { extras?.outgoingPipe }
        set { if newValue != nil || extras != nil { madeExtras.outgoingPipe = newValue } }
    }

    /// Set by closeAfterFlushing: the close waits for the queue to drain, up to a deadline.
    var flushingClose: FlushingClose? {
        get { extras?.flushingClose }
        set { if newValue != nil || extras != nil { madeExtras.flushingClose = newValue } }
    }

    /// Completions of a flushing close that the loop's ending could not post.
    var pendingFlushCompletions: (CompletionList, Bool)? {
        get { extras?.pendingFlushCompletions }
        set { if newValue != nil || extras != nil { madeExtras.pendingFlushCompletions = newValue } }
    }

    /// The file being sent into the connection (`StreamFileTransfer`): writes and a shutdown
    /// made meanwhile wait behind it, in order.
    var fileTransfer: StreamFileTransfer? {
        get { extras?.fileTransfer }
        set { if newValue != nil || extras != nil { madeExtras.fileTransfer = newValue } }
    }

    /// Bytes written while a file transfer runs, held until it ends (`StreamFileTransfer`): they
    /// count toward the water marks as queued bytes do, so that a producer sees backpressure.
    var heldWriteBytes: Int {
        get { extras?.heldWriteBytes ?? 0 }
        set { if newValue != 0 || extras != nil { madeExtras.heldWriteBytes = newValue } }
    }

    /// How many bytes the async face buffers before it stops reading from the socket.
    var readBufferLimit: Int {
        get { extras?.readBufferLimit ?? StreamConnectionExtras.defaultReadBufferLimit }
        set {
            if newValue != StreamConnectionExtras.defaultReadBufferLimit || extras != nil {
                madeExtras.readBufferLimit = newValue
            }
        }
    }

    /// The write queue's size at which a connection that stopped being writable is writable again.
    var lowWaterMark: Int {
        get { extras?.lowWaterMark ?? StreamConnectionExtras.defaultLowWaterMark }
        set {
            if newValue != StreamConnectionExtras.defaultLowWaterMark || extras != nil { madeExtras.lowWaterMark = newValue }
        }
    }

    /// The write queue's size above which a connection is no longer writable.
    var highWaterMark: Int {
        get { extras?.highWaterMark ?? StreamConnectionExtras.defaultHighWaterMark }
        set {
            if newValue != StreamConnectionExtras.defaultHighWaterMark || extras != nil { madeExtras.highWaterMark = newValue }
        }
    }
}
