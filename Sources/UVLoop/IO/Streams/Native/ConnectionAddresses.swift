import CLibUV
import Glibc

/// A connection's two addresses, read from its descriptor once: by the first thread that asks
/// for one, or by the loop's thread just before it closes the descriptor (see
/// StreamConnection+Addresses.swift). Immutable but for `asyncState`, which is published once, so
/// any thread may read it. One per connection.
final class ConnectionAddresses: Sendable {
    /// How a connection's addresses are read from its descriptor.
    enum Source: UInt8 {
        /// A TCP socket: IPv4 or IPv6 addresses.
        case internet
        /// A Unix-domain socket, or a pipe (which has no address): paths.
        case unixDomain
        /// Nothing to read: a terminal, or a stream whose addresses were known when it was made.
        case none
    }

    let local: SocketAddress?
    let remote: SocketAddress?
    /// The connection's async state, when it is made after the addresses were kept: the
    /// connection keeps one of the two, the first made (see `StreamConnection.published`).
    let asyncState = PublishedReference<StreamAsyncState>()

    init(local: SocketAddress?, remote: SocketAddress?) {
        self.local = local
        self.remote = remote
    }

    /// Reads the addresses of the socket `descriptor`, which must stay open for the call, the way
    /// `source` says; an address the kernel does not report is nil.
    static func reading(_ descriptor: Int32, as source: Source) -> ConnectionAddresses {
        switch source {
        case .internet:
            let local = SocketAddress.reading { getsockname(descriptor, $0, $1) }
            return ConnectionAddresses(local: local, remote: internetPeer(of: descriptor, family: local?.family))
        case .unixDomain:
            return ConnectionAddresses(
                local: path { getsockname(descriptor, $0, $1) }, remote: path { getpeername(descriptor, $0, $1) })
        case .none:
            return ConnectionAddresses(local: nil, remote: nil)
        }
    }

    /// The peer's address of a TCP socket whose own address is of `family`. `SO_PEERNAME`
    /// answers for as long as the socket keeps the peer's address, also once the peer has reset
    /// the connection, where `getpeername` reports `ENOTCONN`; it wants a buffer no longer than
    /// the address, so the family's own size.
    private static func internetPeer(of descriptor: Int32, family: SocketAddress.Family?) -> SocketAddress? {
        if let family, family != .unix {
            let size = family == .ipv4 ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
            let peer = SocketAddress.reading(size: size) { getsockopt(descriptor, SOL_SOCKET, SO_PEERNAME, $0, $1) }
            if let peer { return peer }
        }
        return SocketAddress.reading { getpeername(descriptor, $0, $1) }
    }

    /// A Unix-domain socket's path read by `get`, as libuv's `uv_pipe_getsockname` gives it: up to
    /// its first zero byte, so that an unnamed socket (and an abstract one) has the empty path;
    /// nil when `get` fails (a pipe or a terminal is no socket).
    private static func path(_ get: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> SocketAddress? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let status = withUnsafeMutableBytes(of: &address) { get($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length) }
        guard status == 0 else { return nil }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let count = max(0, min(Int(length) - pathOffset, MemoryLayout.size(ofValue: address.sun_path)))
        let path = withUnsafeBytes(of: &address.sun_path) { bytes in
            let named = bytes.prefix(count)
            return String(decoding: named.prefix { $0 != 0 }, as: UTF8.self)
        }
        return SocketAddress(storage: .unix(path: path))
    }
}
