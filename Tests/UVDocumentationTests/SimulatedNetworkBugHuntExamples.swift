import UVLoop
import UVLoopTesting
import XCTest

// docs:begin simulated-retrying-client
/// Sends the requests 1 through `last`, one at a time, and waits up to 1 s for each reply (the
/// server echoes the request's byte). On a timeout, or when the connection breaks, it reconnects
/// after 100 ms and sends the request again.
final class RetryingClient {
    let loop: Loop
    let server: SocketAddress
    let last: UInt8
    /// The fix, off by default so that the simulation has a bug to find.
    let cancelsTimeoutWhenTheConnectionBreaks: Bool
    private var connection: StreamConnection?
    private var timeout: LoopTimer?
    private var request: UInt8 = 1
    private var sentAt = LoopInstant.zero
    /// What happened, and each timeout that fired before its request had waited 1 s.
    private(set) var log: [String] = []
    private(set) var violations: [String] = []

    init(loop: Loop, server: SocketAddress, last: UInt8, cancelsTimeoutWhenTheConnectionBreaks: Bool = false) {
        self.loop = loop
        self.server = server
        self.last = last
        self.cancelsTimeoutWhenTheConnectionBreaks = cancelsTimeoutWhenTheConnectionBreaks
    }

    var isDone: Bool { request > last }

    func connect() {
        try? loop.connect(to: server) { [self] result in
            guard case .success(let connection) = result else { return retryLater("connect failed") }
            self.connection = connection
            try? connection.startReading { [self] connection, read in
                guard case .bytes(let reply) = read else { return broken(connection) }
                if reply.last == request { answered() }
            }
            send()
        }
    }

    private func send() {
        guard let connection, !isDone else { return }
        sentAt = loop.now
        try? connection.write([request])
        timeout = try? loop.assumeIsolated().schedule(after: .seconds(1)) { [self] in timedOut() }
    }

    private func answered() {
        timeout?.cancel()
        log.append("\(loop.now.nanoseconds / 1_000_000) ms: reply \(request)")
        request += 1
        send()
    }

    private func timedOut() {
        let waited = sentAt.duration(to: loop.now)
        if isDone {
            violations.append("\(loop.now.nanoseconds / 1_000_000) ms: a timeout fired with no request waiting")
        } else if waited < .seconds(1) {
            violations.append("\(loop.now.nanoseconds / 1_000_000) ms: request \(request) timed out after \(waited.milliseconds) ms")
        }
        connection?.close()
        connection = nil
        retryLater("timeout")
    }

    private func broken(_ broken: StreamConnection) {
        broken.close()
        guard broken === connection else { return }
        connection = nil
        // The mistake, unless the fix is on: the timeout of the request in flight stays armed,
        // and fires later against the request sent again on the next connection.
        if cancelsTimeoutWhenTheConnectionBreaks { timeout?.cancel() }
        retryLater("connection lost")
    }

    private func retryLater(_ why: String) {
        log.append("\(loop.now.nanoseconds / 1_000_000) ms: \(why), reconnecting in 100 ms")
        _ = try? loop.assumeIsolated().schedule(after: .milliseconds(100)) { [self] in connect() }
    }
}
// docs:end

/// One run of the client against an echo server over a network with a seeded latency and one
/// seeded fault: what happened (the network's trace and the client's log) and what went wrong.
struct BugHuntRun: Equatable, Error, CustomStringConvertible {
    var output: [String]
    var violations: [String]

    var description: String { violations.joined(separator: "; ") }
}

// docs:begin simulated-bug-hunt-scenario
func runRetryingClient(on network: SimulatedNetwork, fixed: Bool = false) throws -> BugHuntRun {
    network.isTracing = true
    let server = try network.addHost("server", address: "10.0.0.1")
    let client = try network.addHost("client", address: "10.0.0.2")
    network.setLink(from: "client", to: "server", SimulatedLink(latency: .uniform(min: .milliseconds(1), max: .milliseconds(40))))
    let address = try SocketAddress(ip: "10.0.0.1", port: 7000)
    _ = try server.loop.listen(on: address) { accepted in
        guard case .success(let connection) = accepted else { return }
        try? connection.startReading { connection, read in
            if case .bytes(let request) = read { try? connection.write(request) }   // echo
        }
    }
    // One fault, of a kind and at an instant drawn from the seed: a reset, a stall or a partition.
    network.scheduleRandomFaults(1, within: .seconds(10), hosts: ["client", "server"])
    let retrying = RetryingClient(loop: client.loop, server: address, last: 50, cancelsTimeoutWhenTheConnectionBreaks: fixed)
    retrying.connect()
    try network.advanceTime(by: .seconds(20))
    return BugHuntRun(output: network.trace + retrying.log, violations: retrying.violations)
}
// docs:end

/// The simulation finds the client's mistake: the seed runner over 1,000 seeds stops at a seed
/// whose run breaks the client's rule, and a replay of that seed is the same run, byte for byte.
final class SimulatedNetworkBugHuntExamples: XCTestCase {
    func testTheSeedRunnerFindsTheStaleTimeoutAndTheReplayReproducesIt() throws {
        var failure: SimulationFailure?
        // docs:begin simulated-seed-runner
        do {
            try SimulatedNetwork.run(seeds: 0..<1_000) { network in
                let run = try runRetryingClient(on: network)
                if !run.violations.isEmpty { throw run }
            }
        } catch {
            print(error)   // seed 25 failed: 2551 ms: a timeout fired with no request waiting; replay with SimulatedNetwork(seed: 25)
            failure = error
        }
        // docs:end
        let found = try XCTUnwrap(failure, "no seed of 1,000 exposed the stale timeout")
        let failed = try XCTUnwrap(found.error as? BugHuntRun)
        XCTAssertEqual(
            "\(found)", "seed 25 failed: 2551 ms: a timeout fired with no request waiting; replay with SimulatedNetwork(seed: 25)",
            "what the article shows")
        // docs:begin simulated-replay
        let network = SimulatedNetwork(seed: found.seed)
        let replay = try runRetryingClient(on: network)
        network.shutdown()
        // docs:end
        XCTAssertEqual(replay, failed, "the replay of seed \(found.seed) is the same run, byte for byte")
        XCTAssertFalse(replay.violations.isEmpty)

        let fixedNetwork = SimulatedNetwork(seed: found.seed)
        XCTAssertEqual(try runRetryingClient(on: fixedNetwork, fixed: true).violations, [], "the fix")
        fixedNetwork.shutdown()
        print((replay.output + replay.violations).map { "  \($0)" }.joined(separator: "\n"))
    }

    func testTheFixedClientPassesEverySeed() throws {
        try SimulatedNetwork.run(seeds: 0..<200) { network in
            let run = try runRetryingClient(on: network, fixed: true)
            if !run.violations.isEmpty { throw run }
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    fileprivate var milliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
}
