import UVLoop
import UVLoopTesting
import XCTest

/// A client that sends requests one connection at a time, each with a 1 s timeout, and retries
/// a request that failed or timed out 100 ms later: the small protocol the seed tests run.
final class RetryingEchoClient {
    let loop: Loop
    let address: SocketAddress
    let requests: Int
    private(set) var answered = 0
    private(set) var log: [String] = []

    init(loop: Loop, address: SocketAddress, requests: Int) {
        self.loop = loop
        self.address = address
        self.requests = requests
    }

    func start() { sendNext() }

    private func note(_ line: String) { log.append("\(loop.now.nanoseconds) \(line)") }

    private func sendNext() {
        guard answered < requests else { return }
        let message = "request \(answered) " + String(repeating: "x", count: 20_000)
        var finished = false
        var timer: LoopTimer?
        func finish(_ outcome: String) {
            guard !finished else { return }
            finished = true
            timer?.cancel()
            note(outcome)
            if outcome == "answered" {
                answered += 1
                sendNext()
            } else {
                _ = try? loop.assumeIsolated().schedule(after: .milliseconds(100)) { self.sendNext() }
            }
        }
        timer = try? loop.assumeIsolated().schedule(after: .seconds(1)) { finish("timed out") }
        do {
            try Echo.request(on: loop, to: address, message) { result in
                switch result {
                case .success(let answer): finish(answer == message ? "answered" : "wrong answer")
                case .failure(let error): finish("failed: \(error)")
                }
            }
        } catch {
            finish("could not connect: \(error)")
        }
    }
}

/// Determinism and the seed runner.
final class SimulatedNetworkSeedTests: XCTestCase {
    /// Three clients against one echo server over links of random latency, with random resets,
    /// stalls and partitions in the first second. Returns the clients once time reaches 120 s.
    @discardableResult
    private func runProtocol(on network: SimulatedNetwork) throws -> [RetryingEchoClient] {
        network.connectTimeout = .seconds(3)
        network.defaultLink = SimulatedLink(latency: .uniform(min: .milliseconds(1), max: .milliseconds(50)), bandwidth: 1_000_000)
        let server = try network.addHost("server", address: "10.0.0.1")
        let address = try SocketAddress(ip: "10.0.0.1", port: 80)
        _ = try Echo.serve(on: server.loop, at: address)
        var clients: [RetryingEchoClient] = []
        for index in 1...3 {
            let host = try network.addHost("client\(index)", address: "10.0.1.\(index)")
            clients.append(RetryingEchoClient(loop: host.loop, address: address, requests: 3))
        }
        network.scheduleRandomFaults(4, within: .seconds(1), hosts: network.hosts.map(\.name))
        for client in clients { client.start() }
        try network.advanceTime(by: .seconds(120))
        return clients
    }

    private func transcript(seed: UInt64) throws -> [String] {
        let network = SimulatedNetwork(seed: seed)
        network.isTracing = true
        defer { network.shutdown() }
        let clients = try runProtocol(on: network)
        return network.trace + clients.flatMap(\.log)
    }

    func testTheSameSeedGivesTheSameInterleaving() throws {
        let first = try transcript(seed: 5)
        let second = try transcript(seed: 5)
        XCTAssertGreaterThan(first.count, 20)
        XCTAssertEqual(first, second)
        XCTAssertNotEqual(first, try transcript(seed: 6), "another seed draws other latencies and faults")
    }

    func testAThousandSeedsOfTheProtocolAllAnswer() throws {
        let clock = ContinuousClock()
        let start = clock.now
        var seedsWithRetries = 0
        try SimulatedNetwork.run(seeds: 0..<1000) { network in
            let clients = try runProtocol(on: network)
            if clients.contains(where: { $0.log.count > $0.requests }) { seedsWithRetries += 1 }
            for client in clients where client.answered != client.requests {
                throw LoopError.invalidArgument("a client got \(client.answered) answers of \(client.requests): \(client.log)")
            }
        }
        print("1000 seeds of the retrying echo protocol: \(clock.now - start), \(seedsWithRetries) with retries")
        XCTAssertGreaterThan(seedsWithRetries, 100, "the faults made clients retry")
    }

    func testAFailingSeedIsReportedWithItsReplay() {
        XCTAssertThrowsError(try SimulatedNetwork.run(seeds: 0..<10) { network in
            if network.seed == 4 { throw LoopError.invalidArgument("the answer was wrong") }
        }) { error in
            XCTAssertEqual((error as? SimulationFailure)?.seed, 4)
            XCTAssertEqual(
                "\(error)", "seed 4 failed: invalid argument: the answer was wrong; replay with SimulatedNetwork(seed: 4)")
        }
    }
}
