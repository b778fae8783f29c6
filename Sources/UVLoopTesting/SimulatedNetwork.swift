import UVLoop

/// A deterministic network of named hosts in one test: each host is a real `Loop` on a manual
/// clock, and their listeners and connections talk through the simulation in memory, with no
/// kernel socket and no thread. Bytes move, and timers fire, only as the test moves time.
///
/// The code under test does not change: it gets a host's ``SimulatedHost/loop`` and calls
/// `listen(on:)` and `connect(to:)` with `SocketAddress`es, and uses the `StreamListener`s and
/// `StreamConnection`s it gets, backpressure, water marks and all.
///
/// Create the network with a seed, add hosts (``addHost(_:address:)``), set links between them
/// (``setLink(from:to:_:oneWay:)``), start the code under test on the hosts' loops, and move
/// time with ``advanceTime(by:)``; inject faults (``partition(_:from:)``, ``stall(_:for:)``,
/// ``resetConnections(between:and:)``, ``refuseConnections(to:port:)``) when the test wants
/// them, or schedule them (``schedule(_:at:)``, ``scheduleRandomFaults(_:within:hosts:kinds:)``).
/// ``run(seeds:_:)`` runs a test over many seeds and names the one that fails.
///
/// Threading: everything runs on the thread that created the network (the test's): its calls, and
/// every host's loop, whose thread it is. Ordering: deliveries happen in (due time, the order they
/// were sent); hosts run in the order they were added. The same seed and the same test give the
/// same interleaving, byte for byte.
///
/// Lifetime: the network holds its hosts, and a host does not hold its network. Keep the network
/// (a `let` in the test) for as long as its hosts' loops, listeners and connections are used: a
/// host used after its network is released stops the program with a message naming the host.
public final class SimulatedNetwork {
    /// The seed of the network's generator, from which latencies and random faults are drawn.
    public let seed: UInt64
    /// The network's time, which every host's clock follows.
    public private(set) var now = LoopInstant.zero
    /// The hosts, in the order they were added (the order they run in).
    public private(set) var hosts: [SimulatedHost] = []
    /// The link between two hosts that ``setLink(from:to:_:oneWay:)`` did not set.
    public var defaultLink = SimulatedLink()
    /// How long a connect waits for an answer across a partition before it fails with
    /// `UV_ETIMEDOUT` (Linux gives up after about 127 s of retries).
    public var connectTimeout = Duration.seconds(127)
    /// The receive window a new host's connections get (see ``SimulatedHost/receiveWindow``).
    public var defaultReceiveWindow = 64 * 1024
    /// The send buffer a new host's connections get (see ``SimulatedHost/sendBufferSize``):
    /// Linux's first size, 16 KiB.
    public var defaultSendBufferSize = 16 * 1024
    /// What happened, one line each (time, hosts, what), when ``isTracing`` is on: compare two
    /// runs' traces to see that they interleaved alike.
    public private(set) var trace: [String] = []
    /// Whether to record ``trace``.
    public var isTracing = false

    var random: SimulatedRandom
    private var events: [SimulatedEvent] = []
    private var nextSequence: UInt64 = 0
    private var links: [SimulatedPath: SimulatedLink] = [:]
    var linkBusyUntil: [SimulatedPath: UInt64] = [:]
    /// Unordered pairs of host indexes that cannot reach each other.
    /// How many partitions cut each pair of hosts (either way round): a pair is cut while its
    /// count is above zero, so overlapping partitions each last their own length.
    var cutPaths: [SimulatedPath: Int] = [:]
    /// What was sent across a partition, sent again when it heals.
    var heldTransmissions: [() -> Void] = []
    /// The connections open between hosts, in the order they were made.
    var connections: [SimulatedConnectionRecord] = []
    /// Closed streams whose kernel still has bytes to send, kept until their end goes out.
    var lingering: [ObjectIdentifier: SimulatedStream] = [:]

    /// Creates an empty network whose random choices come from `seed`.
    /// - Parameter seed: the generator's seed; a failing run replays with the same one.
    public init(seed: UInt64) {
        self.seed = seed
        random = SimulatedRandom(seed: seed)
    }

    // MARK: hosts

    /// Adds a host named `name` with the IPv4 or IPv6 `address`; its ``SimulatedHost/loop`` is a
    /// new manual-clock loop on this thread, at the network's time.
    /// - Throws: `LoopError.invalidArgument` when the name or the address is taken, or the
    ///   address is not an IP address.
    public func addHost(_ name: String, address: String) throws(LoopError) -> SimulatedHost {
        if hosts.contains(where: { $0.name == name }) {
            throw .invalidArgument("SimulatedNetwork.addHost: a host named \"\(name)\" exists already; give each host its own name")
        }
        let parsed = try SocketAddress(ip: address, port: 0)
        guard let ip = parsed.ip else { throw .invalidArgument("SimulatedNetwork.addHost: \(address) is not an IP address") }
        if hosts.contains(where: { $0.address == ip }) {
            throw .invalidArgument("SimulatedNetwork.addHost: the address \(ip) belongs to another host; give each host its own address")
        }
        let loop = try Loop.manual()
        loop.setManualTime(now)
        let host = SimulatedHost(name: name, address: ip, index: hosts.count, loop: loop, network: self)
        loop.setStreamSimulation(host)
        hosts.append(host)
        return host
    }

    /// The host named `name`, if any.
    public func host(named name: String) -> SimulatedHost? { hosts.first { $0.name == name } }

    func requireHost(_ name: String, _ operation: String) -> SimulatedHost {
        guard let host = host(named: name) else {
            misuseStop("UVLoopTesting: SimulatedNetwork.\(operation) names no host \"\(name)\"; add it with addHost(_:address:) first", file: #fileID, line: #line)
        }
        return host
    }

    // MARK: links

    /// Sets the link from `from` to `to`, and back unless `oneWay`.
    /// - Parameters:
    ///   - from: a host's name.
    ///   - to: another host's name.
    ///   - link: its latency, bandwidth, loss and reordering.
    ///   - oneWay: sets only the direction from `from` to `to`.
    public func setLink(from: String, to: String, _ link: SimulatedLink, oneWay: Bool = false) {
        let source = requireHost(from, "setLink").index
        let destination = requireHost(to, "setLink").index
        links[SimulatedPath(source, destination)] = link
        if !oneWay { links[SimulatedPath(destination, source)] = link }
    }

    /// The link from one host to another.
    func link(_ path: SimulatedPath) -> SimulatedLink { links[path] ?? defaultLink }

    // MARK: moving time

    /// Moves the network's time, and every host's clock, forward by `duration`: see
    /// ``advanceTime(to:)``.
    /// - Throws: `LoopError.invalidArgument` for a negative duration.
    public func advanceTime(by duration: Duration) throws(LoopError) {
        guard duration >= .zero else {
            throw .invalidArgument("SimulatedNetwork.advanceTime(by:) needs a non-negative duration (got \(duration))")
        }
        try advanceTime(to: now.advanced(by: duration))
    }

    /// Moves time forward to `deadline` in steps: runs what is ready now, then, for each instant
    /// at which something is due (a host's timer, a delivery, the end of a stall, a scheduled
    /// fault) up to `deadline`, sets every host's clock to exactly that instant and runs until
    /// idle (``runUntilIdle()``). Ends with every clock at `deadline`.
    ///
    /// Call on the test's thread, outside every host's callbacks (from one, it stops the program
    /// with a message naming the misuse). A deadline in the past moves nothing.
    /// - Throws: what a host's loop throws other than its shutdown (a host whose loop shut down
    ///   is left out from then on).
    public func advanceTime(to deadline: LoopInstant) throws(LoopError) {
        // The steps a single loop's `advanceTime(to:)` takes, over every host's clock at once.
        var advance = ManualClockAdvance(to: deadline)
        while advance.moveClock(earliestDeadline: { nextDeadline() }, setTime: { if $0 > now { setTime($0) } }) {
            try runUntilIdle()
        }
    }

    /// Runs everything ready at the current time, without moving it: deliveries due now, in
    /// order, each as a callback of its host's loop, then each host's loop until idle (in host
    /// order), again until nothing is due. A stalled host runs nothing.
    public func runUntilIdle() throws(LoopError) {
        for host in hosts where !host.isShutDown {
            misusePrecondition(
                !host.loop.isInsideRun,
                "UVLoopTesting: SimulatedNetwork.advanceTime or runUntilIdle called from inside a callback of host \"\(host.name)\"; move time from the test, outside the hosts' callbacks")
        }
        repeat {
            while let index = firstDueEvent() {
                let event = events.remove(at: index)
                guard let hostIndex = event.host else {
                    event.action()
                    continue
                }
                let host = hosts[hostIndex]
                if host.isShutDown { continue }
                do throws(LoopError) {
                    try host.loop.runSimulatedDelivery(event.action)
                } catch .shutDown {
                    host.isShutDown = true
                }
            }
            for host in hosts where !host.isShutDown && !host.isStalled(at: now) {
                do throws(LoopError) {
                    try host.loop.runUntilIdle()
                } catch .shutDown {
                    host.isShutDown = true
                }
            }
        } while firstDueEvent() != nil
    }

    /// Shuts every host's loop down (closing their listeners and connections) and runs them
    /// until closed. Call once the test is done with the network.
    public func shutdown() {
        for host in hosts where !host.isShutDown {
            host.loop.shutdown()
            _ = try? host.loop.runUntilIdle()
            host.isShutDown = true
        }
        events.removeAll()
        heldTransmissions.removeAll()
        connections.removeAll()
        lingering.removeAll()
    }

    private func setTime(_ instant: LoopInstant) {
        now = instant
        for host in hosts where !host.isShutDown {
            host.loop.setManualTime(instant)
            if let until = host.stalledUntil, until <= instant { host.stalledUntil = nil }
        }
    }

    /// The earliest instant after now at which something is due (what is due by now,
    /// `runUntilIdle()` has run: a later instant is what moves time forward).
    private func nextDeadline() -> LoopInstant? {
        var earliest: LoopInstant?
        func consider(_ instant: LoopInstant) {
            guard instant > now else { return }
            if earliest.map({ instant < $0 }) ?? true { earliest = instant }
        }
        for event in events { consider(effectiveTime(event)) }
        for host in hosts where !host.isShutDown {
            if let until = host.stalledUntil { consider(until) }
            if let deadline = host.loop.earliestTimerDeadline {
                consider(max(deadline, host.stalledUntil ?? deadline))
            }
        }
        return earliest
    }

    private func effectiveTime(_ event: SimulatedEvent) -> LoopInstant {
        guard let index = event.host, let until = hosts[index].stalledUntil else { return event.time }
        return max(event.time, until)
    }

    /// The first event due now, in (time, sequence) order, whose host is not stalled.
    private func firstDueEvent() -> Int? {
        for (index, event) in events.enumerated() {
            if event.time > now { return nil }
            if let host = event.host, hosts[host].isStalled(at: now) { continue }
            return index
        }
        return nil
    }

    // MARK: scheduling

    /// Runs `action` at `time` as a callback of the host with index `host` (nil: the network's own
    /// step, outside every loop), after what was scheduled for the same instant before.
    func schedule(at time: LoopInstant, host: Int?, _ action: @escaping () -> Void) {
        let event = SimulatedEvent(time: max(time, now), sequence: nextSequence, host: host, action: action)
        nextSequence += 1
        var low = 0
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].time <= event.time { low = middle + 1 } else { high = middle }
        }
        events.insert(event, at: low)
    }

    func record(_ line: @autoclosure () -> String) {
        guard isTracing else { return }
        trace.append("\(now.nanoseconds) \(line())")
    }
}

/// One thing the network does at an instant: a delivery to a host, or a fault.
struct SimulatedEvent {
    let time: LoopInstant
    let sequence: UInt64
    let host: Int?
    let action: () -> Void
}

/// The direction from one host to another, by index.
struct SimulatedPath: Hashable {
    let source: Int
    let destination: Int

    init(_ source: Int, _ destination: Int) {
        self.source = source
        self.destination = destination
    }

    /// The same pair either way (for partitions).
    var unordered: SimulatedPath { SimulatedPath(min(source, destination), max(source, destination)) }
}
