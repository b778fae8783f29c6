import CLibUV
import Glibc

/// Conversions between ``SocketAddress`` and the kernel's `sockaddr` structures, through libuv's
/// helpers (`uv_ip4_addr`, `uv_ip6_addr`, `uv_ip4_name`, `uv_ip6_name`).
extension SocketAddress {
    /// Parses an IPv4 or IPv6 literal; nil when `ip` is neither.
    static func parsing(ip: String, port: UInt16) -> SocketAddress? {
        var v4 = sockaddr_in()
        if uv_ip4_addr(ip, Int32(port), &v4) == 0 { return SocketAddress(v4) }
        var v6 = sockaddr_in6()
        if uv_ip6_addr(ip, Int32(port), &v6) == 0 { return SocketAddress(v6) }
        return nil
    }

    init(_ address: sockaddr_in) {
        self.init(storage: .ipv4(address: address.sin_addr.s_addr, port: UInt16(bigEndian: address.sin_port)))
    }

    init(_ address: sockaddr_in6) {
        let words = withUnsafeBytes(of: address.sin6_addr) { ($0.load(as: UInt64.self), $0.load(fromByteOffset: 8, as: UInt64.self)) }
        self.init(storage: .ipv6(
            high: words.0, low: words.1, scope: address.sin6_scope_id, port: UInt16(bigEndian: address.sin6_port)))
    }

    /// The address in `address`, which holds `sockaddr_in` or `sockaddr_in6`; nil for others.
    init?(_ address: UnsafePointer<sockaddr>) {
        let raw = UnsafeRawPointer(address)
        switch Int32(address.pointee.sa_family) {
        case AF_INET: self.init(raw.load(as: sockaddr_in.self))
        case AF_INET6: self.init(raw.load(as: sockaddr_in6.self))
        default: return nil
        }
    }

    /// Reads an IPv4 or IPv6 address with `get` (`uv_tcp_getsockname`, `getpeername`, ...) into
    /// a buffer of `size` bytes, whose length `get` takes as libuv's `int` or the kernel's
    /// `socklen_t`; nil when `get` fails or reads another family.
    static func reading<Length: FixedWidthInteger>(
        size: Int = MemoryLayout<sockaddr_storage>.size,
        _ get: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<Length>) -> Int32
    ) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = Length(size)
        return withUnsafeMutableBytes(of: &storage) { raw -> SocketAddress? in
            let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)
            guard get(address, &length) == 0 else { return nil }
            return SocketAddress(UnsafePointer(address))
        }
    }

    /// Reads a Unix-domain socket's path with `get` (`uv_pipe_getsockname`, `uv_pipe_getpeername`);
    /// an unnamed socket has the empty path; nil on failure.
    static func readingPath(_ get: (UnsafeMutablePointer<CChar>, UnsafeMutablePointer<Int>) -> Int32) -> SocketAddress? {
        var buffer = [CChar](repeating: 0, count: 256)
        var length = buffer.count
        let status = buffer.withUnsafeMutableBufferPointer { get($0.baseAddress!, &length) }
        guard status == 0 else { return nil }
        let bytes = buffer[..<min(length, buffer.count)].map { UInt8(bitPattern: $0) }
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        return SocketAddress(storage: .unix(path: String(decoding: bytes[..<end], as: UTF8.self)))
    }

    /// Calls `body` with the address as a `sockaddr` (IP addresses only: a Unix path is passed
    /// to libuv as text).
    func withNative<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        switch storage {
        case .ipv4(let address, let port):
            var native = sockaddr_in()
            native.sin_family = sa_family_t(AF_INET)
            native.sin_port = port.bigEndian
            native.sin_addr.s_addr = address
            return withUnsafeBytes(of: &native) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
        case .ipv6(let high, let low, let scope, let port):
            var native = sockaddr_in6()
            native.sin6_family = sa_family_t(AF_INET6)
            native.sin6_port = port.bigEndian
            native.sin6_scope_id = scope
            withUnsafeMutableBytes(of: &native.sin6_addr) {
                $0.storeBytes(of: high, as: UInt64.self)
                $0.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            }
            return withUnsafeBytes(of: &native) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
        case .unix:
            preconditionFailure("UVLoop: a Unix socket path has no sockaddr form here")
        }
    }

    /// The address family for a socket created before binding (`uv_tcp_init_ex`).
    var nativeFamily: Int32 {
        switch storage {
        case .ipv4: return AF_INET
        case .ipv6: return AF_INET6
        case .unix: return AF_UNIX
        }
    }

    /// The IP address as numeric text.
    var numericHost: String {
        var text = [CChar](repeating: 0, count: 64)
        withNative { address in
            text.withUnsafeMutableBufferPointer { buffer in
                if address.pointee.sa_family == sa_family_t(AF_INET) {
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        _ = uv_ip4_name($0, buffer.baseAddress!, buffer.count)
                    }
                } else {
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        _ = uv_ip6_name($0, buffer.baseAddress!, buffer.count)
                    }
                }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
