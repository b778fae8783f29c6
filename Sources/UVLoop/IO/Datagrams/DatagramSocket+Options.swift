extension DatagramSocket {
    /// Allows sending to broadcast addresses (`SO_BROADCAST`), such as `255.255.255.255` or a
    /// subnet's broadcast address. Loop thread only.
    /// - Parameter enabled: whether broadcasts may be sent.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)``
    ///   when the kernel refuses.
    public func setBroadcast(_ enabled: Bool) throws(LoopError) {
        let core = try openCore("DatagramSocket.setBroadcast(_:)")
        try check(core.handle.setBroadcast(enabled), "uv_udp_set_broadcast")
    }

    /// Sets the time to live of unicast datagrams (`IP_TTL`, `IPV6_UNICAST_HOPS`): how many
    /// routers they may cross. Loop thread only.
    /// - Parameter ttl: 1 through 255.
    /// - Throws: ``LoopError/invalidArgument(_:)`` out of that range; ``LoopError/streamClosed``
    ///   after ``close()``; ``LoopError/libuv(function:code:)`` when the kernel refuses.
    public func setTimeToLive(_ ttl: Int) throws(LoopError) {
        let core = try openCore("DatagramSocket.setTimeToLive(_:)")
        try check(core.handle.setTTL(Self.validTTL(ttl)), "uv_udp_set_ttl")
    }

    /// Sets the time to live of multicast datagrams (`IP_MULTICAST_TTL`); 1, the kernel's
    /// default, keeps them on the local network. Loop thread only.
    /// - Parameter ttl: 0 through 255.
    /// - Throws: ``LoopError/invalidArgument(_:)`` out of that range; ``LoopError/streamClosed``
    ///   after ``close()``; ``LoopError/libuv(function:code:)`` when the kernel refuses.
    public func setMulticastTimeToLive(_ ttl: Int) throws(LoopError) {
        let core = try openCore("DatagramSocket.setMulticastTimeToLive(_:)")
        guard ttl >= 0, ttl <= 255 else {
            throw .invalidArgument("a multicast time to live must be 0 through 255 (got \(ttl))")
        }
        try check(core.handle.setMulticastTTL(Int32(ttl)), "uv_udp_set_multicast_ttl")
    }

    /// Whether multicast datagrams this socket sends are also delivered to the sending host's
    /// own members of the group (`IP_MULTICAST_LOOP`; on by default). Loop thread only.
    /// - Parameter enabled: whether to loop them back.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)``
    ///   when the kernel refuses.
    public func setMulticastLoopback(_ enabled: Bool) throws(LoopError) {
        let core = try openCore("DatagramSocket.setMulticastLoopback(_:)")
        try check(core.handle.setMulticastLoopback(enabled), "uv_udp_set_multicast_loop")
    }

    /// Chooses the interface multicast datagrams leave by (`IP_MULTICAST_IF`), by its address
    /// (`"192.168.1.10"`; for IPv6, an interface name such as `"eth0"` or a scoped address);
    /// nil lets the kernel choose. Loop thread only.
    /// - Parameter interface: the interface's address, or nil.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)``
    ///   when the address is not an interface's (`UV_EINVAL`, `UV_EADDRNOTAVAIL`).
    public func setMulticastInterface(_ interface: String?) throws(LoopError) {
        let core = try openCore("DatagramSocket.setMulticastInterface(_:)")
        try check(core.handle.setMulticastInterface(interface), "uv_udp_set_multicast_interface")
    }

    /// Joins the multicast group `group` (`"239.1.2.3"`, `"ff02::1"`), on the interface with
    /// address `interface` (nil: the kernel chooses), so that the socket receives the group's
    /// datagrams sent to its port. Loop thread only.
    /// - Parameters:
    ///   - group: the group's address, as numeric text.
    ///   - interface: the address of the interface to join on, or nil.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)``
    ///   when `group` is not a multicast address (`UV_EINVAL`) or the kernel refuses.
    public func joinMulticastGroup(_ group: String, interface: String? = nil) throws(LoopError) {
        let core = try openCore("DatagramSocket.joinMulticastGroup(_:interface:)")
        try check(core.handle.setMembership(group: group, interface: interface, join: true), "uv_udp_set_membership")
    }

    /// Leaves a group joined with ``joinMulticastGroup(_:interface:)``. Loop thread only.
    /// - Parameters:
    ///   - group: the group's address, as numeric text.
    ///   - interface: the interface it was joined on, or nil.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)``
    ///   when the socket is not a member (`UV_EADDRNOTAVAIL`).
    public func leaveMulticastGroup(_ group: String, interface: String? = nil) throws(LoopError) {
        let core = try openCore("DatagramSocket.leaveMulticastGroup(_:interface:)")
        try check(core.handle.setMembership(group: group, interface: interface, join: false), "uv_udp_set_membership")
    }

    private static func validTTL(_ ttl: Int) throws(LoopError) -> Int32 {
        guard ttl >= 1, ttl <= 255 else {
            throw .invalidArgument("a time to live must be 1 through 255 (got \(ttl))")
        }
        return Int32(ttl)
    }

    private func check(_ status: Int32, _ function: String) throws(LoopError) {
        guard status == 0 else { throw .libuv(status, function) }
    }
}
