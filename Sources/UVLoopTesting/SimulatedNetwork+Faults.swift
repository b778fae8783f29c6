import UVLoop

/// A fault that ``SimulatedNetwork/schedule(_:at:)`` injects at a chosen instant (or
/// ``SimulatedNetwork/scheduleRandomFaults(_:within:hosts:kinds:)`` at seeded ones).
public enum SimulatedFault: Sendable, Hashable {
    /// ``SimulatedNetwork/partition(_:from:)``.
    case partition([String], from: [String])
    /// ``SimulatedNetwork/heal()``.
    case heal
    /// ``SimulatedNetwork/heal(_:from:)``.
    case healPartition([String], from: [String])
    /// ``SimulatedNetwork/stall(_:for:)``.
    case stall(String, for: Duration)
    /// ``SimulatedNetwork/resetConnections(between:and:)``.
    case resetConnections(between: String, and: String)
    /// ``SimulatedNetwork/refuseConnections(to:port:)``.
    case refuseConnections(to: String, port: Int)
    /// ``SimulatedNetwork/acceptConnections(to:port:)``.
    case acceptConnections(to: String, port: Int)
}

/// Faults injected by the test. Each takes effect at the network's current time.
extension SimulatedNetwork {
    /// Cuts every host of `group` off from every host of `other`, both ways, until
    /// ``heal(_:from:)`` with the same hosts (or ``heal()``). Partitions may overlap: a pair that
    /// two partitions cut stays cut until both have healed.
    ///
    /// A connect across the cut fails with `UV_ETIMEDOUT` after ``connectTimeout``; bytes, ends
    /// and resets sent across it wait and arrive after the heal (plus the link's latency), as
    /// TCP's retransmissions would bring them. What was already on its way arrives.
    /// - Parameters:
    ///   - group: host names.
    ///   - other: host names.
    public func partition(_ group: [String], from other: [String]) {
        for path in pairs(group, other, "partition") { cutPaths[path, default: 0] += 1 }
        record("partition \(group) from \(other)")
    }

    /// Ends the partition that ``partition(_:from:)`` made with the same hosts (either way round):
    /// what waited on a pair no other partition cuts is sent again now, in the order it was sent.
    /// A pair no partition cuts is left as it is.
    /// - Parameters:
    ///   - group: host names.
    ///   - other: host names.
    public func heal(_ group: [String], from other: [String]) {
        for path in pairs(group, other, "heal") {
            guard let count = cutPaths[path] else { continue }
            cutPaths[path] = count > 1 ? count - 1 : nil
        }
        record("heal \(group) from \(other)")
        sendHeldTransmissions()
    }

    /// Ends every partition: what waited on a cut is sent again now, in the order it was sent.
    public func heal() {
        cutPaths.removeAll()
        record("heal")
        sendHeldTransmissions()
    }

    /// The pairs of hosts between `group` and `other`, each once, either way round.
    private func pairs(_ group: [String], _ other: [String], _ operation: String) -> [SimulatedPath] {
        var pairs: [SimulatedPath] = []
        for first in group {
            for second in other {
                let path = SimulatedPath(requireHost(first, operation).index, requireHost(second, operation).index).unordered
                if !pairs.contains(path) { pairs.append(path) }
            }
        }
        return pairs
    }

    /// Sends again what waited on a cut; what crosses a pair still cut waits again, in order.
    private func sendHeldTransmissions() {
        let held = heldTransmissions
        heldTransmissions.removeAll()
        for transmission in held { transmission() }
    }

    /// Pauses `host` for `duration`, as a stopped process: its loop runs nothing (its timers fire
    /// late, at the stall's end, at the earliest) and nothing is delivered to it until then; what
    /// is sent to it waits. Its clock keeps moving with the network's.
    /// - Parameters:
    ///   - host: a host's name.
    ///   - duration: how long it stalls, from now; a later end than a stall under way extends it.
    public func stall(_ host: String, for duration: Duration) {
        let stalled = requireHost(host, "stall")
        let end = now.advanced(by: duration)
        if end > now, stalled.stalledUntil.map({ end > $0 }) ?? true { stalled.stalledUntil = end }
        record("\(host) stalls until \(end.nanoseconds)")
    }

    /// Resets every open connection between `first` and `second`: both ends read `ECONNRESET`
    /// (`LoopError.libuv` with `UV_ECONNRESET`, as from a real socket), bytes not
    /// yet read are dropped, and queued and later writes fail with it.
    /// - Parameters:
    ///   - first: a host's name.
    ///   - second: another host's name.
    public func resetConnections(between first: String, and second: String) {
        let one = requireHost(first, "resetConnections").index
        let two = requireHost(second, "resetConnections").index
        record("reset connections between \(first) and \(second)")
        for connection in connections where !connection.isReset {
            let indexes = Set(connection.hosts.map(\.index))
            guard indexes == [one, two] || (one == two && indexes == [one]) else { continue }
            connection.isReset = true
            for side in 0..<2 {
                guard let end = connection.end(side) else { continue }
                schedule(at: now, host: connection.hosts[side].index) { end.receiveReset() }
            }
        }
    }

    /// Makes connects to `port` of `host` fail with `UV_ECONNREFUSED`, listener or not, until
    /// ``acceptConnections(to:port:)``.
    /// - Parameters:
    ///   - host: a host's name.
    ///   - port: the port.
    public func refuseConnections(to host: String, port: Int) {
        requireHost(host, "refuseConnections").refusedPorts.insert(port)
        record("\(host) refuses port \(port)")
    }

    /// Undoes ``refuseConnections(to:port:)``.
    /// - Parameters:
    ///   - host: a host's name.
    ///   - port: the port.
    public func acceptConnections(to host: String, port: Int) {
        requireHost(host, "acceptConnections").refusedPorts.remove(port)
        record("\(host) accepts port \(port)")
    }

    /// Injects `fault` when the network's time reaches `instant` (at once if it has), before the
    /// hosts' deliveries due at that instant that were scheduled after this call.
    /// - Parameters:
    ///   - fault: what to inject.
    ///   - instant: when.
    public func schedule(_ fault: SimulatedFault, at instant: LoopInstant) {
        schedule(at: instant, host: nil) { [unowned self] in inject(fault) }
    }

    /// Schedules `count` faults drawn from `kinds` at instants drawn uniformly over the next
    /// `window`, between hosts drawn from `hosts`, all from the network's seeded generator: the
    /// same seed draws the same faults. A partition heals, and a stall ends, after a draw of up to
    /// a tenth of `window`. `kinds` may hold `.partition`, `.stall` and `.resetConnections`
    /// faults (their own hosts and durations are ignored: only their kind counts).
    /// - Parameters:
    ///   - count: how many faults.
    ///   - window: the span they fall in, from now.
    ///   - hosts: the host names they involve (at least two).
    ///   - kinds: the kinds to draw from.
    public func scheduleRandomFaults(
        _ count: Int, within window: Duration, hosts: [String],
        kinds: [SimulatedFault] = [.resetConnections(between: "", and: ""), .stall("", for: .zero), .partition([], from: [])]
    ) {
        guard count > 0, hosts.count >= 2, !kinds.isEmpty else { return }
        let span = window.simulatedNanoseconds
        for _ in 0..<count {
            let at = now.advanced(by: .nanoseconds(Int64(random.next(upTo: span))))
            let length = Duration.nanoseconds(Int64(1 + random.next(upTo: max(1, span / 10))))
            let first = hosts[Int(random.next(upTo: UInt64(hosts.count - 1)))]
            var second = hosts[Int(random.next(upTo: UInt64(hosts.count - 2)))]
            if second == first { second = hosts[hosts.count - 1] }
            switch kinds[Int(random.next(upTo: UInt64(kinds.count - 1)))] {
            case .stall:
                schedule(.stall(first, for: length), at: at)
            case .partition:
                schedule(.partition([first], from: [second]), at: at)
                schedule(.healPartition([first], from: [second]), at: at.advanced(by: length))
            default:
                schedule(.resetConnections(between: first, and: second), at: at)
            }
        }
    }

    func inject(_ fault: SimulatedFault) {
        switch fault {
        case .partition(let group, let other): partition(group, from: other)
        case .heal: heal()
        case .healPartition(let group, let other): heal(group, from: other)
        case .stall(let host, let duration): stall(host, for: duration)
        case .resetConnections(let first, let second): resetConnections(between: first, and: second)
        case .refuseConnections(let host, let port): refuseConnections(to: host, port: port)
        case .acceptConnections(let host, let port): acceptConnections(to: host, port: port)
        }
    }
}
