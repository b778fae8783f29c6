import UVLoop
import UVLoopTesting

/// A simulated network (UVLoopTesting): two hosts whose real loops talk through the simulation,
/// a partition that heals, a lossy link for datagrams, a name that fails to resolve, and the same
/// run again from the same seed.
func runSimulatedNetworkSection() throws {
    print("\n== A simulated network: hosts, links, faults and seeds, all on a manual clock")
    let first = try simulatedRun(seed: 42)
    for line in first { print("  \(line)") }
    let again = try simulatedRun(seed: 42)
    print("  the same seed again gives the same \(again.count) lines: \(again == first)")
}

/// One run: a client sends a request every second to an echo server across a 20 ms link that a
/// partition cuts from 2.5 s to 4 s; then datagrams over a link that loses some; then lookups.
private func simulatedRun(seed: UInt64) throws -> [String] {
    var lines: [String] = []
    let network = SimulatedNetwork(seed: seed)
    defer { network.shutdown() }
    let server = try network.addHost("server", address: "10.0.0.1")
    let client = try network.addHost("client", address: "10.0.0.2")
    network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(20), loss: 0.2))
    func milliseconds(_ host: SimulatedHost) -> UInt64 { host.loop.now.nanoseconds / 1_000_000 }

    lines.append("1. An echo across a 20 ms link, one request a second, a partition from 2.5 s to 4 s:")
    _ = try server.loop.listen(on: SocketAddress(ip: "10.0.0.1", port: 7)) { accepted in
        guard case .success(let connection) = accepted else { return }
        try? connection.startReading { connection, read in
            if case .bytes(let bytes) = read { try? connection.write(bytes) }
        }
    }
    network.schedule(.partition(["client"], from: ["server"]), at: LoopInstant.zero.advanced(by: .milliseconds(2_500)))
    network.schedule(.heal, at: LoopInstant.zero.advanced(by: .seconds(4)))
    try client.loop.connect(to: SocketAddress(ip: "10.0.0.1", port: 7)) { connected in
        guard case .success(let connection) = connected else { return }
        try? connection.startReading { _, read in
            if case .bytes(let bytes) = read { lines.append("  reply \(bytes[0]) at \(milliseconds(client)) ms") }
        }
        for second in 1...5 {
            _ = try? client.loop.assumeIsolated().schedule(after: .seconds(second)) {
                try? connection.write([UInt8(second)])
            }
        }
    }
    try network.advanceTime(by: .seconds(6))
    lines.append("  (request 3, sent at 3,040 ms into the partition, waited for the heal, as TCP's retransmissions would)")

    lines.append("2. Twenty datagrams over the same link, which loses one in five (drawn from the seed):")
    let inbox = try server.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 9125))
    var received: [UInt8] = []
    try inbox.startReceiving { _, read in
        if case .datagram(let bytes, _, _) = read { received.append(bytes[0]) }
    }
    let outbox = try client.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 0))
    for number in 0..<20 as Range<UInt8> { try outbox.send([number], to: inbox.localAddress) }
    try network.advanceTime(by: .milliseconds(100))
    lines.append("  received \(received.count): \(received)")

    lines.append("3. Names: db.internal resolves after a 5 ms lookup, then fails as a DNS timeout would:")
    try network.setName("db.internal", addresses: ["10.0.0.1"])
    network.lookupLatency = .milliseconds(5)
    try client.loop.resolve(host: "db.internal", port: 5432) { result in
        lines.append("  \(result.map { $0.map(\.description) }) at \(milliseconds(client)) ms")
    }
    try network.advanceTime(by: .milliseconds(10))
    network.failLookups(of: "db.internal", with: .temporaryFailure)
    try client.loop.resolve(host: "db.internal", port: 5432) { result in
        if case .failure(let error) = result { lines.append("  \(error) at \(milliseconds(client)) ms") }
    }
    try network.advanceTime(by: .milliseconds(10))
    return lines
}
