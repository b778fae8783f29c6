/// What a connection's read handler receives (see ``StreamConnection/startReading(_:)``).
///
/// Loop thread only, like the handler itself.
public enum StreamRead {
    /// Bytes that arrived. The buffer is lent for the duration of the handler's call only: it is
    /// the loop's read buffer, which the next read on any connection of the loop reuses. Copy
    /// what you keep (`Array(bytes)`); write it back (``StreamConnection/write(_:completion:)-(UnsafeRawBufferPointer,_)``)
    /// without copying.
    case bytes(UnsafeRawBufferPointer)
    /// The peer shut down its writing side (end of stream): no more bytes will arrive. The
    /// connection stays open, and writing still works, until you close it.
    case end
    /// Reading failed, and has stopped: ``LoopError/libuv(function:code:)`` for an I/O error such
    /// as `UV_ECONNRESET` (the peer reset the connection), or ``LoopError/shutDown`` /
    /// ``LoopError/detached`` when the loop closed the connection. Close the connection.
    case failed(LoopError)
}
