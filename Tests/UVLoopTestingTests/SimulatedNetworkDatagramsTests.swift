import CLibUV
import UVLoop
import UVLoopTesting
import UVTestSupport
import XCTest

/// Datagram sockets on the simulated network, after libuv's test-udp-*.c where they apply: send
/// and receive, binding, connected sockets, truncation; and the network's own: latency, loss,
/// reordering, partitions, a full receive buffer, the same run for the same seed.
final class SimulatedNetworkDatagramsTests: XCTestCase {
    private var network: SimulatedNetwork!
    private var server: SimulatedHost!
    private var client: SimulatedHost!

    override func setUp() {
        network = SimulatedNetwork(seed: 7)
        server = try! network.addHost("server", address: "10.0.0.1")
        client = try! network.addHost("client", address: "10.0.0.2")
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(5)))
    }

    override func tearDown() {
        network.shutdown()
        network = nil
    }

    /// A socket that records what it receives, as "bytes from sender at ms".
    private func receiver(_ socket: DatagramSocket, on host: SimulatedHost, into log: Recorder<String>) throws {
        try socket.startReceiving { _, read in
            switch read {
            case .datagram(let bytes, let sender, let truncated):
                let text = String(decoding: bytes, as: UTF8.self)
                log.append("\(text)\(truncated ? " (truncated)" : "") from \(sender) at \(host.loop.now.nanoseconds / 1_000_000)")
            case .failed(let error):
                log.append("failed \(error) at \(host.loop.now.nanoseconds / 1_000_000)")
            }
        }
    }

    func testAPingAndItsPongCrossTheLinkAfterItsLatency() throws {
        let log = Recorder<String>()
        let ping = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 9000))
        try ping.startReceiving { socket, read in
            guard case .datagram(let bytes, let sender, _) = read else { return }
            log.append("\(String(decoding: bytes, as: UTF8.self)) from \(sender) at \(self.server.loop.now.nanoseconds / 1_000_000)")
            try? socket.send(Array("PONG".utf8), to: sender)
        }
        let pong = try client.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 0))
        XCTAssertEqual(pong.localAddress, try SocketAddress(ip: "10.0.0.2", port: 49152), "the lowest ephemeral port")
        try receiver(pong, on: client, into: log)
        try pong.send(Array("PING".utf8), to: SocketAddress(ip: "10.0.0.1", port: 9000))
        try network.advanceTime(by: .milliseconds(4))
        XCTAssertEqual(log.values, [], "not before the latency")
        try network.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(log.values, ["PING from 10.0.0.2:49152 at 5", "PONG from 10.0.0.1:9000 at 10"])
    }

    func testBindingATakenPortOrAnotherHostsAddressFailsAsTheKernelDoes() throws {
        _ = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 53))
        XCTAssertThrowsError(try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 53))) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_bind", code: UV_EADDRINUSE.rawValue))
        }
        XCTAssertThrowsError(try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 53))) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_bind", code: UV_EADDRNOTAVAIL.rawValue))
        }
        // A datagram port is not a stream port: a listener may take the same number.
        _ = try server.loop.listen(on: SocketAddress(ip: "10.0.0.1", port: 53)) { _ in }
    }

    func testAClosedSocketsPortIsFreeAgain() throws {
        let first = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 53))
        first.close()
        XCTAssertNoThrow(try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 53)))
    }

    func testAConnectedSocketSendsWithoutAnAddressAndHearsOnlyItsPeer() throws {
        let log = Recorder<String>()
        let listening = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 9000))
        try receiver(listening, on: server, into: log)
        let connected = try client.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 7000))
        try connected.connect(to: SocketAddress(ip: "10.0.0.1", port: 9000))
        try receiver(connected, on: client, into: log)
        let stranger = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 9001))
        try connected.send(Array("to peer".utf8))
        XCTAssertThrowsError(try connected.send(Array("x".utf8), to: SocketAddress(ip: "10.0.0.1", port: 9001))) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_try_send", code: UV_EISCONN.rawValue))
        }
        try stranger.send(Array("from a stranger".utf8), to: connected.localAddress)
        try listening.send(Array("from the peer".utf8), to: connected.localAddress)
        try network.advanceTime(by: .milliseconds(10))
        XCTAssertEqual(log.values, ["to peer from 10.0.0.2:7000 at 5", "from the peer from 10.0.0.1:9000 at 5"])
    }

    func testAConnectedSocketReadsConnectionRefusedWhenNothingListensAtItsPeer() throws {
        let log = Recorder<String>()
        let connected = try client.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 0))
        try connected.connect(to: SocketAddress(ip: "10.0.0.1", port: 9999))
        try receiver(connected, on: client, into: log)
        try connected.send(Array("anyone?".utf8))
        try network.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(log.values, ["failed \(LoopError.libuv(function: "recvmsg", code: UV_ECONNREFUSED.rawValue)) at 10"])
    }

    func testADatagramLongerThanTheLargestIsTruncated() throws {
        let log = Recorder<String>()
        var options = DatagramSocket.Options()
        options.maximumDatagramSize = 4
        let small = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 9000), options: options)
        try receiver(small, on: server, into: log)
        let sender = try client.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 0))
        try sender.send(Array("abcdefgh".utf8), to: small.localAddress)
        try network.advanceTime(by: .milliseconds(5))
        XCTAssertEqual(log.values, ["abcd (truncated) from 10.0.0.2:49152 at 5"])
    }

    func testAFullReceiveBufferDropsWhatArrivesBeyondIt() throws {
        server.datagramReceiveBuffer = 1_000
        let slow = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 9000))
        let sender = try client.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 0))
        for number in 0..<25 { try sender.send([UInt8](repeating: UInt8(number), count: 100), to: slow.localAddress) }
        try network.advanceTime(by: .milliseconds(10))
        var received: [UInt8] = []
        try slow.startReceiving { _, read in
            if case .datagram(let bytes, _, _) = read { received.append(bytes[0]) }
        }
        try network.runUntilIdle()
        XCTAssertEqual(received, Array(0..<10), "the first 1,000 bytes were kept, the other 15 datagrams dropped")
    }

    func testLossAndReorderingAreDrawnFromTheSeed() throws {
        func run(seed: UInt64, _ link: SimulatedLink) throws -> [UInt8] {
            let network = SimulatedNetwork(seed: seed)
            defer { network.shutdown() }
            let one = try network.addHost("one", address: "10.0.0.1")
            let two = try network.addHost("two", address: "10.0.0.2")
            network.setLink(from: "one", to: "two", link)
            let receiving = try two.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 9000))
            var received: [UInt8] = []
            try receiving.startReceiving { _, read in
                if case .datagram(let bytes, _, _) = read { received.append(bytes[0]) }
            }
            let sending = try one.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 0))
            for number in 0..<40 as Range<UInt8> {
                try sending.send([number], to: receiving.localAddress)
                try network.advanceTime(by: .milliseconds(1))
            }
            try network.advanceTime(by: .seconds(1))
            return received
        }
        let lossy = SimulatedLink(latency: .milliseconds(3), loss: 0.3)
        let lost = try run(seed: 1, lossy)
        XCTAssertEqual(try run(seed: 1, lossy), lost, "the same seed loses the same datagrams")
        XCTAssertLessThan(lost.count, 40)
        XCTAssertGreaterThan(lost.count, 0)
        XCTAssertEqual(lost, lost.sorted(), "loss alone keeps the order")
        XCTAssertNotEqual(try run(seed: 2, lossy), lost, "another seed, other losses")
        XCTAssertEqual(try run(seed: 1, SimulatedLink(latency: .milliseconds(3), loss: 1)), [])

        let everyOther = try run(seed: 1, SimulatedLink(latency: .milliseconds(3), reordering: 1))
        XCTAssertEqual(Array(everyOther.prefix(6)), [1, 0, 3, 2, 5, 4], "each held datagram goes after the next one")
        XCTAssertEqual(everyOther.sorted(), Array(0..<40), "reordering loses nothing")

        let doubled = try run(seed: 1, SimulatedLink(latency: .milliseconds(3), duplication: 1))
        XCTAssertEqual(doubled, (0..<40).flatMap { [$0, $0] }, "every datagram arrives twice, a fixed latency keeps the copies together")
        let someDoubled = try run(seed: 1, SimulatedLink(latency: .uniform(min: .milliseconds(1), max: .milliseconds(5)), duplication: 0.3))
        XCTAssertEqual(try run(seed: 1, SimulatedLink(latency: .uniform(min: .milliseconds(1), max: .milliseconds(5)), duplication: 0.3)), someDoubled, "the same seed duplicates the same datagrams")
        XCTAssertEqual(Set(someDoubled), Set(0..<40), "duplication loses nothing")
        XCTAssertGreaterThan(someDoubled.count, 40)
        XCTAssertLessThan(someDoubled.count, 80)
        XCTAssertEqual(try run(seed: 1, SimulatedLink(latency: .milliseconds(3))).count, 40, "no duplication by default")
    }

    func testADatagramAcrossAPartitionIsLost() throws {
        let log = Recorder<String>()
        let listening = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 9000))
        try receiver(listening, on: server, into: log)
        let sender = try client.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 0))
        network.partition(["client"], from: ["server"])
        try sender.send(Array("lost".utf8), to: listening.localAddress)
        try network.advanceTime(by: .milliseconds(10))
        network.heal()
        try sender.send(Array("after".utf8), to: listening.localAddress)
        try network.advanceTime(by: .milliseconds(10))
        XCTAssertEqual(log.values, ["after from 10.0.0.2:49152 at 15"], "UDP does not retransmit")
    }

    func testTheAsyncFaceWorksFromATaskTheHostsLoopRuns() throws {
        let listening = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 9000))
        let echoed = Recorder<String>()
        Task(executorPreference: server.loop) {
            for try await datagram in listening.datagrams {
                try await listening.send(datagram.bytes, to: datagram.sender)
            }
        }
        let loop = client.loop
        Task(executorPreference: loop) {
            let socket = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 0))
            try await socket.send(Array("echo".utf8), to: SocketAddress(ip: "10.0.0.1", port: 9000))
            for try await reply in socket.datagrams {
                echoed.append("\(String(decoding: reply.bytes, as: UTF8.self)) at \(loop.now.nanoseconds / 1_000_000)")
                break
            }
        }
        try network.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(echoed.values, ["echo at 10"])
    }
}
