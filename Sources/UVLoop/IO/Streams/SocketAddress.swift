/// The address of a stream endpoint: an IPv4 or IPv6 address with a port, or the path of a
/// Unix-domain socket.
///
/// A plain value: `Sendable`, comparable for equality, usable as a dictionary key, and printed
/// the way people write addresses (`127.0.0.1:8080`, `[::1]:8080`, `unix:/run/app.sock`).
///
/// ```swift
/// let local = try SocketAddress(ip: "127.0.0.1", port: 8080)
/// let any6 = try SocketAddress(ip: "::", port: 0)          // port 0: the kernel picks one
/// let socket = try SocketAddress(unixPath: "/tmp/app.sock")
/// ```
///
/// Host names are not addresses: resolve them with ``Loop/resolve(host:port:)`` or connect with
/// ``Loop/connect(host:port:)``.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The kind of address.
    public enum Family: Sendable, Hashable {
        /// An IPv4 address and port.
        case ipv4
        /// An IPv6 address (with its scope, for link-local addresses) and port.
        case ipv6
        /// A Unix-domain socket's path.
        case unix
    }

    enum Storage: Hashable {
        /// `address` as the kernel stores it (network byte order), `port` in host order.
        case ipv4(address: UInt32, port: UInt16)
        /// The 16 address bytes as two words in memory order, the scope and the port.
        case ipv6(high: UInt64, low: UInt64, scope: UInt32, port: UInt16)
        case unix(path: String)
    }

    let storage: Storage

    init(storage: Storage) {
        self.storage = storage
    }

    /// The longest Unix-domain socket path, in bytes (the kernel's `sun_path` less its final 0).
    public static let maximumUnixPathLength = 107

    /// An IP address from its numeric text (`"127.0.0.1"`, `"::1"`, `"fe80::1%eth0"`) and a port.
    ///
    /// - Parameters:
    ///   - ip: an IPv4 or IPv6 literal; not a host name.
    ///   - port: 0 through 65535; 0 asks the kernel for any free port when listening.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `ip` is not an IP literal or `port` is out
    ///   of range.
    public init(ip: String, port: Int) throws(LoopError) {
        guard let port = UInt16(exactly: port) else {
            throw .invalidArgument("port must be 0 through 65535 (got \(port))")
        }
        guard let parsed = SocketAddress.parsing(ip: ip, port: port) else {
            throw .invalidArgument(
                "\"\(ip)\" is not an IPv4 or IPv6 address; to use a host name, resolve it with loop.resolve(host:port:) or connect with loop.connect(host:port:)")
        }
        self = parsed
    }

    /// The path of a Unix-domain socket.
    ///
    /// - Parameter unixPath: a file system path, at most ``maximumUnixPathLength`` bytes of UTF-8.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path, a path with a zero byte, or
    ///   one longer than the kernel accepts (it would be cut short silently).
    public init(unixPath: String) throws(LoopError) {
        guard !unixPath.isEmpty, !unixPath.utf8.contains(0) else {
            throw .invalidArgument("a Unix socket path must be non-empty and contain no zero byte")
        }
        guard unixPath.utf8.count <= Self.maximumUnixPathLength else {
            throw .invalidArgument(
                "the Unix socket path is \(unixPath.utf8.count) bytes long, more than the \(Self.maximumUnixPathLength) the kernel accepts; use a shorter path (a relative one, or a shorter directory)")
        }
        storage = .unix(path: unixPath)
    }

    /// The kind of address.
    public var family: Family {
        switch storage {
        case .ipv4: return .ipv4
        case .ipv6: return .ipv6
        case .unix: return .unix
        }
    }

    /// The port, for IP addresses; nil for a Unix-domain socket.
    public var port: Int? {
        switch storage {
        case .ipv4(_, let port), .ipv6(_, _, _, let port): return Int(port)
        case .unix: return nil
        }
    }

    /// The IP address as numeric text (`"127.0.0.1"`, `"::1"`); nil for a Unix-domain socket.
    public var ip: String? {
        switch storage {
        case .ipv4, .ipv6: return numericHost
        case .unix: return nil
        }
    }

    /// The path, for a Unix-domain socket; nil for IP addresses. The peer of a connection to a
    /// listening socket usually has no name: its path is empty.
    public var path: String? {
        if case .unix(let path) = storage { return path }
        return nil
    }

    /// `127.0.0.1:8080`, `[::1]:8080`, or `unix:` and the path.
    public var description: String {
        switch storage {
        case .ipv4(_, let port): return "\(numericHost):\(port)"
        case .ipv6(_, _, _, let port): return "[\(numericHost)]:\(port)"
        case .unix(let path): return "unix:\(path)"
        }
    }
}
