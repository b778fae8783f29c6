import CLibUV
import UVLoop

/// Datagrams between the hosts: a host's `openDatagramSocket(bindingTo:options:)` binds a
/// simulated socket, and what it sends crosses the link's latency and bandwidth, and its loss and
/// reordering, drawn from the network's seeded generator.
extension SimulatedHost: DatagramSimulation {
    /// The bytes of datagrams a datagram socket of this host keeps while its owner does not
    /// receive them; datagrams that arrive beyond it are dropped, as the kernel drops them when
    /// a socket's receive buffer (`SO_RCVBUF`) is full. 212,992 bytes by default (Linux's
    /// default); applies to sockets opened after it is set. The kernel also counts its own
    /// bookkeeping against the buffer, the simulation only the datagrams' bytes.
    public var datagramReceiveBuffer: Int {
        get { loop.simulatedDatagramPorts.receiveBufferSize }
        set { loop.simulatedDatagramPorts.receiveBufferSize = max(0, newValue) }
    }

    package func bind(_ socket: SimulatedDatagramSocket, to address: SocketAddress) throws(LoopError) {
        guard let ip = address.ip, var port = address.port else {
            throw .invalidArgument("a simulated host binds datagram sockets to IP addresses, not to \(address); use SocketAddress(ip:port:)")
        }
        guard ip == self.address || ip == "0.0.0.0" || ip == "::" else {
            throw .libuv(function: "uv_udp_bind", code: UV_EADDRNOTAVAIL.rawValue)
        }
        let ports = loop.simulatedDatagramPorts
        if port == 0 {
            // The lowest free port of the ephemeral range: the same on every run.
            port = 49152
            while ports.sockets[port] != nil, port < 65535 { port += 1 }
        }
        guard ports.sockets[port] == nil else { throw .libuv(function: "uv_udp_bind", code: UV_EADDRINUSE.rawValue) }
        ports.sockets[port] = socket
        socket.localAddress = try SocketAddress(ip: self.address, port: port)
        network.record("\(name) binds datagram port \(port)")
    }

    package func send(_ socket: SimulatedDatagramSocket, _ bytes: [UInt8], to address: SocketAddress) {
        network.sendDatagram(bytes, from: socket, of: self, to: address)
    }

    package func closed(_ socket: SimulatedDatagramSocket) {
        guard let port = socket.localAddress?.port else { return }
        let ports = loop.simulatedDatagramPorts
        if ports.sockets[port] === socket { ports.sockets[port] = nil }
        socket.heldBack?.release()
        socket.heldBack = nil
    }

    package func later(_ socket: SimulatedDatagramSocket, _ body: @escaping () -> Void) {
        network.schedule(at: network.now, host: index, body)
    }
}

extension SimulatedNetwork {
    /// Carries one datagram: lost across a partition, to an address no host has, or with the
    /// link's loss; otherwise due after the link's bandwidth and latency, and, with the link's
    /// reordering, held back and sent after the sender's next datagram (or after twice the
    /// link's drawn latency, at the latest, when it sends none). With the link's duplication a
    /// copy crosses too, with its own latency. At its destination it goes to the
    /// socket bound to its port; with none there, a connected sender reads `UV_ECONNREFUSED`, as
    /// the kernel reports the ICMP "port unreachable" to a connected socket.
    func sendDatagram(_ bytes: [UInt8], from socket: SimulatedDatagramSocket, of host: SimulatedHost, to address: SocketAddress) {
        guard let sender = socket.localAddress else { return }
        guard let ip = address.ip, let port = address.port, let destination = hosts.first(where: { $0.address == ip }) else {
            return record("\(host.name) sends a datagram to \(address), which no host has: lost")
        }
        let path = SimulatedPath(host.index, destination.index)
        if isCut(path) { return record("\(host.name) sends a datagram to \(destination.name) across a partition: lost") }
        if random.happens(link(path).loss) { return record("\(host.name) sends a datagram of \(bytes.count) bytes to \(destination.name): lost") }
        let connectedTo = socket.remoteAddress
        let deliver = { [unowned self] in
            if let receiver = destination.loop.simulatedDatagramPorts.sockets[port] {
                return receiver.receive(bytes, from: sender)
            }
            record("\(destination.name) has no datagram socket on port \(port)")
            guard connectedTo == address, !isCut(SimulatedPath(destination.index, host.index)) else { return }
            let back = self.arrival(SimulatedPath(destination.index, host.index), byteCount: 0)
            schedule(at: LoopInstant(nanoseconds: back), host: host.index) {
                socket.receiveFailure(UV_ECONNREFUSED.rawValue)
            }
        }
        let transmit = { [unowned self] in
            let arrival = arrival(path, byteCount: bytes.count)
            record("\(host.name) sends a datagram of \(bytes.count) bytes to \(destination.name):\(port), due at \(arrival)")
            schedule(at: LoopInstant(nanoseconds: arrival), host: destination.index, deliver)
            guard random.happens(link(path).duplication) else { return }
            let copy = self.arrival(path, byteCount: bytes.count)
            record("\(host.name)'s datagram to \(destination.name):\(port) is duplicated, the copy due at \(copy)")
            schedule(at: LoopInstant(nanoseconds: copy), host: destination.index, deliver)
        }
        // What an earlier datagram held back waits for: this one goes first, then it.
        let held = socket.heldBack
        socket.heldBack = nil
        if held == nil, random.happens(link(path).reordering) {
            holdBack(transmit, in: socket, of: host, path: path)
        } else {
            transmit()
        }
        held?.release()
    }

    private func holdBack(_ transmit: @escaping () -> Void, in socket: SimulatedDatagramSocket, of host: SimulatedHost, path: SimulatedPath) {
        let number = random.next()
        record("\(host.name) holds a datagram back")
        socket.heldBack = (number, transmit)
        let latest = now.advanced(by: .nanoseconds(Int64(min(2 * link(path).latency.draw(&random), UInt64(Int64.max)))))
        schedule(at: latest, host: nil) {
            guard let held = socket.heldBack, held.number == number else { return }
            socket.heldBack = nil
            held.release()
        }
    }
}
