/// A datagram received by a ``DatagramSocket``'s async face (``DatagramSocket/datagrams``): its
/// bytes, copied out of the loop's buffer, and who sent it.
public struct Datagram: Sendable, Hashable {
    /// The datagram's payload (its first bytes only, when ``isTruncated``).
    public var bytes: [UInt8]
    /// The address and port the datagram came from: where to send a reply.
    public var sender: SocketAddress
    /// Whether the datagram was longer than the socket's
    /// ``DatagramSocket/Options/maximumDatagramSize``: ``bytes`` holds its beginning, and the
    /// kernel dropped the rest.
    public var isTruncated: Bool

    /// A datagram with these contents.
    /// - Parameters:
    ///   - bytes: the payload.
    ///   - sender: where it came from.
    ///   - isTruncated: whether the kernel cut it short.
    public init(bytes: [UInt8], sender: SocketAddress, isTruncated: Bool = false) {
        self.bytes = bytes
        self.sender = sender
        self.isTruncated = isTruncated
    }
}

/// What a datagram socket's receive handler gets (see ``DatagramSocket/startReceiving(_:)``).
///
/// Loop thread only, like the handler itself.
public enum DatagramRead {
    /// A datagram arrived from `sender`. The bytes are lent for the duration of the handler's
    /// call only: they lie in the loop's receive buffer, which the next receive on any socket of
    /// the loop reuses. Copy what you keep (`Array(bytes)`); send it on
    /// (``DatagramSocket/send(_:to:completion:)-(UnsafeRawBufferPointer,_,_)``) without copying.
    /// `isTruncated`: the datagram was longer than the socket's
    /// ``DatagramSocket/Options/maximumDatagramSize``, and the kernel dropped the rest.
    case datagram(UnsafeRawBufferPointer, sender: SocketAddress, isTruncated: Bool)
    /// Receiving failed: ``LoopError/libuv(function:code:)`` for an error the kernel reported,
    /// such as `UV_ECONNREFUSED` on a connected socket whose peer has no socket on its port (an
    /// ICMP error); the socket goes on receiving. Or, last of all, ``LoopError/shutDown`` /
    /// ``LoopError/detached`` when the loop closed the socket.
    case failed(LoopError)
}
