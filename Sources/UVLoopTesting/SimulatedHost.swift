import CLibUV
import UVLoop

/// One host of a ``SimulatedNetwork``: a name, an IP address and a manual-clock `Loop` whose
/// listeners and connections go through the simulated network.
///
/// Give ``loop`` to the code under test. Threading: the test's thread only (the network's).
public final class SimulatedHost {
    /// The host's name, which the network's calls (links, partitions, faults) use.
    public let name: String
    /// The host's IP address, as `SocketAddress.ip` spells it.
    public let address: String
    /// The host's loop: a real loop with a manual clock, owned by the test's thread, which the
    /// network steps. Its `listen(on:)` and `connect(to:)` open simulated streams.
    public let loop: Loop
    /// The most bytes a connection accepted or opened by this host holds for its reader before
    /// the peer's writes wait (the peer's write queue then grows and its water marks react).
    /// Applies to connections made after it is set.
    public var receiveWindow: Int
    /// The most bytes the kernel of this host takes from a connection's writes beyond what the
    /// peer's window takes (its send buffer): a writer's queue grows once both are full. A
    /// graceful close still sends them. Applies to connections made after it is set.
    public var sendBufferSize: Int

    let index: Int
    /// Weak: the network holds its hosts, and a test that lets go of the network while it still
    /// uses a host's loop must hear what it did, not crash on a dangling reference.
    private weak var weakNetwork: SimulatedNetwork?
    /// The network this host is on; stops the program, naming the host, once the network is gone.
    var network: SimulatedNetwork {
        guard let network = weakNetwork else {
            misuseStop(
                "UVLoopTesting: host \"\(name)\" was used after its SimulatedNetwork was released; keep the network (a let in the test) alive for as long as its hosts' loops, listeners and connections are used",
                file: #fileID, line: #line)
        }
        return network
    }
    /// The instant a stall ends; nil when the host runs.
    var stalledUntil: LoopInstant?
    /// The host's loop has shut down: it runs no more, and nothing is delivered to it.
    var isShutDown = false
    /// The listeners, by port.
    var listeners: [Int: SimulatedStream] = [:]
    /// Ports connections may not reach (``SimulatedNetwork/refuseConnections(to:port:)``).
    var refusedPorts: Set<Int> = []
    private var nextEphemeralPort = 49152

    init(name: String, address: String, index: Int, loop: Loop, network: SimulatedNetwork) {
        self.name = name
        self.address = address
        self.index = index
        self.loop = loop
        weakNetwork = network
        receiveWindow = network.defaultReceiveWindow
        sendBufferSize = network.defaultSendBufferSize
    }

    /// Whether the host is stalled at `instant` (its loop runs nothing, nothing is delivered).
    public func isStalled(at instant: LoopInstant) -> Bool {
        stalledUntil.map { instant < $0 } ?? false
    }

    func ephemeralPort() -> Int {
        repeat {
            nextEphemeralPort = nextEphemeralPort >= 65535 ? 49152 : nextEphemeralPort + 1
        } while listeners[nextEphemeralPort] != nil
        return nextEphemeralPort
    }
}

/// One simulated connection: its two ends, their hosts, and the order of arrivals each way.
final class SimulatedConnectionRecord {
    /// The connecting end (0) and the accepted end (1); weak, as each end holds this record.
    private weak var client: SimulatedStream?
    private weak var server: SimulatedStream?
    let hosts: [SimulatedHost]
    /// The latest arrival each way (0: from the connecting end), so that bytes stay in order.
    var lastArrival: [UInt64] = [0, 0]
    /// The ends that have closed.
    var closed = [false, false]
    var isReset = false

    init(client: SimulatedStream, server: SimulatedStream, hosts: [SimulatedHost]) {
        self.client = client
        self.server = server
        self.hosts = hosts
    }

    func side(of stream: SimulatedStream) -> Int { client === stream ? 0 : 1 }

    /// The end on `side`, while it exists.
    func end(_ side: Int) -> SimulatedStream? { side == 0 ? client : server }
}

extension SimulatedHost: StreamSimulation {
    package func listen(_ listener: SimulatedStream, on address: SocketAddress) throws(LoopError) {
        guard let ip = address.ip, var port = address.port else {
            throw .invalidArgument("a simulated host listens on IP addresses, not on \(address); use SocketAddress(ip:port:)")
        }
        guard ip == self.address || ip == "0.0.0.0" || ip == "::" else {
            throw .libuv(function: "uv_tcp_bind", code: UV_EADDRNOTAVAIL.rawValue)
        }
        if port == 0 { port = ephemeralPort() }
        guard listeners[port] == nil else { throw .libuv(function: "uv_tcp_bind", code: UV_EADDRINUSE.rawValue) }
        listeners[port] = listener
        listener.localAddress = try SocketAddress(ip: self.address, port: port)
        listener.record = self
        network.record("\(name) listens on \(port)")
    }

    package func connect(_ stream: SimulatedStream, to address: SocketAddress) throws(LoopError) {
        guard let ip = address.ip, let port = address.port else {
            throw .invalidArgument("a simulated host connects to IP addresses, not to \(address); use SocketAddress(ip:port:)")
        }
        guard let server = network.hosts.first(where: { $0.address == ip }) else {
            throw .invalidArgument(
                "connect(to: \(address)): no host of the simulated network has the address \(ip); add one with SimulatedNetwork.addHost(_:address:)")
        }
        stream.localAddress = try SocketAddress(ip: self.address, port: ephemeralPort())
        stream.remoteAddress = address
        network.record("\(name) connects to \(server.name):\(port)")
        network.startConnect(stream, from: self, to: server, port: port)
    }

    package func send(_ stream: SimulatedStream, _ bytes: [UInt8]) {
        guard let record = stream.record as? SimulatedConnectionRecord, !record.isReset else { return }
        let side = record.side(of: stream)
        guard let peer = record.end(1 - side) else { return }
        network.transmit(record: record, from: side, byteCount: bytes.count) { peer.receive(bytes) }
    }

    package func sendEnd(_ stream: SimulatedStream) {
        network.lingering[ObjectIdentifier(stream)] = nil
        guard let record = stream.record as? SimulatedConnectionRecord, !record.isReset else { return }
        let side = record.side(of: stream)
        guard let peer = record.end(1 - side) else { return }
        network.transmit(record: record, from: side, byteCount: 0) { peer.receiveEnd() }
    }

    package func acknowledge(_ stream: SimulatedStream, _ count: Int) {
        guard let record = stream.record as? SimulatedConnectionRecord, !record.isReset else { return }
        let side = record.side(of: stream)
        guard let peer = record.end(1 - side) else { return }
        network.transmit(record: record, from: side, byteCount: 0, ordered: false) { peer.acknowledged(count) }
    }

    package func closed(_ stream: SimulatedStream, reset: Bool) {
        if stream.record === self {
            if let port = stream.localAddress?.port, listeners[port] === stream { listeners[port] = nil }
            return
        }
        guard let record = stream.record as? SimulatedConnectionRecord else { return }
        let side = record.side(of: stream)
        record.closed[side] = true
        // A closed stream whose kernel still sends lives on until its end goes out (or a reset).
        network.lingering[ObjectIdentifier(stream)] = reset || !stream.hasUnsentBytes ? nil : stream
        if record.closed[1 - side] { network.connections.removeAll { $0 === record } }
        // A graceful close sends the end itself (`sendEnd`), after what its kernel still holds.
        guard reset, !record.isReset, let peer = record.end(1 - side) else { return }
        record.isReset = true
        network.record("\(name) resets a connection to \(record.hosts[1 - side].name)")
        network.transmit(record: record, from: side, byteCount: 0) { peer.receiveReset() }
    }

    package func later(_ stream: SimulatedStream, _ body: @escaping () -> Void) {
        network.schedule(at: network.now, host: index, body)
    }
}
