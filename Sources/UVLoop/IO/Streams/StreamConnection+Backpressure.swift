/// A connection's write queue, as ``StreamConnection/writeQueueStatus()`` reads it.
public struct StreamWriteQueueStatus: Sendable, Equatable {
    /// The bytes written but not yet taken by the kernel.
    public var queuedBytes: Int
    /// Whether a writer should go on writing (see ``StreamConnection/isWritable``).
    public var isWritable: Bool
    /// The queue size at or below which ``isWritable`` turns true again.
    public var lowWaterMark: Int
    /// The queue size above which ``isWritable`` turns false.
    public var highWaterMark: Int
}

extension StreamConnection: Hashable {
    /// Whether `lhs` and `rhs` are the same connection: connections compare by identity, so one
    /// can key a dictionary or fill a set.
    public static func == (lhs: StreamConnection, rhs: StreamConnection) -> Bool { lhs === rhs }

    /// Hashes the connection's identity.
    /// - Parameter hasher: the hasher to feed.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension StreamListener: Hashable {
    /// Whether `lhs` and `rhs` are the same listener: listeners compare by identity.
    public static func == (lhs: StreamListener, rhs: StreamListener) -> Bool { lhs === rhs }

    /// Hashes the listener's identity.
    /// - Parameter hasher: the hasher to feed.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension StreamConnection {
    /// The write queue's figures (queued bytes, writability, water marks), read on the loop's
    /// thread: callable from any task.
    /// - Returns: the figures as they were when the loop's thread read them.
    /// - Throws: the loop's ``LoopError/shutDown`` (``LoopError/detached``) once it no longer
    ///   runs work.
    public func writeQueueStatus() async throws(LoopError) -> StreamWriteQueueStatus {
        let box = box
        return try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<StreamWriteQueueStatus>) in
            let core = box.value
            // Bytes tasks wrote and the loop has not taken yet count as queued.
            core.flushAsyncWrites()
            continuation.resume(returning: StreamWriteQueueStatus(
                queuedBytes: core.queuedWriteBytes, isWritable: core.isWritable,
                lowWaterMark: core.lowWaterMark, highWaterMark: core.highWaterMark))
        } cancel: { _ in }
    }

    /// Closes the connection once what was written has left: reads stop reaching the read
    /// handler (or ``reads``) at once, the writing side is shut down after the queued writes
    /// (the peer reads the end of the stream after the last reply), what the peer still sends
    /// is read and discarded until it ends its side too (or sends nothing for a second), and
    /// then the connection closes. At `deadline` it closes whatever is left. Callable from any
    /// thread; idempotent.
    ///
    /// ``close()`` right after ``write(_:completion:)-(UnsafeRawBufferPointer,_)`` drops what the
    /// kernel did not take yet, and closing with unread bytes from the peer makes the kernel
    /// reset the connection, which can lose the reply on its way: use this to say goodbye
    /// ("ERR idle timeout") to a slow peer.
    /// - Parameter deadline: how long the flush may take, on the loop's clock.
    public func closeAfterFlushing(within deadline: Duration = .seconds(10)) {
        let box = box
        _ = loop.onLoopThread { box.value.closeAfterFlushing(within: deadline, nil) }
    }

    /// Closes the connection once what was written has left (see
    /// ``closeAfterFlushing(within:)->()``), and waits until it is closed. Callable from any task.
    /// Cancelling the task does not end the wait: the deadline bounds it.
    /// - Parameter deadline: how long the flush may take, on the loop's clock.
    /// - Returns: whether every queued byte was handed to the kernel before the close.
    /// - Throws: the loop's ``LoopError/shutDown`` (``LoopError/detached``) once it no longer
    ///   runs work.
    @discardableResult
    public func closeAfterFlushing(within deadline: Duration = .seconds(10)) async throws(LoopError) -> Bool {
        let box = box
        return try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<Bool>) in
            box.value.closeAfterFlushing(within: deadline) { continuation.resume(returning: $0) }
        } cancel: { _ in }
    }
}
