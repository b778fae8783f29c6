import CLibUV
import UVLoop

/// How a name lookup on a ``SimulatedNetwork`` fails, as the system's resolver fails: the error
/// is `LoopError.libuv(function:code:)` with function `getaddrinfo` and the code given here.
public enum SimulatedLookupFailure: Sendable, Hashable {
    /// The name does not exist (`UV_EAI_NONAME`, a DNS server's NXDOMAIN).
    case notFound
    /// No answer now, a later try may get one (`UV_EAI_AGAIN`, a DNS server that timed out).
    case temporaryFailure
    /// The resolver failed for good (`UV_EAI_FAIL`, a DNS server's SERVFAIL).
    case serverFailure

    /// The libuv error code the lookup fails with.
    public var code: Int32 {
        switch self {
        case .notFound: UV_EAI_NONAME.rawValue
        case .temporaryFailure: UV_EAI_AGAIN.rawValue
        case .serverFailure: UV_EAI_FAIL.rawValue
        }
    }
}

/// The network's names, failures and lookup latency, kept in every host's loop.
final class SimulatedNames {
    var addresses: [String: [String]] = [:]
    var failures: [String: SimulatedLookupFailure] = [:]
    var latency = SimulatedLatency.milliseconds(1)
}

/// Name resolution: a host's `resolve(host:port:)` and `connect(host:port:)` answer from the
/// network's names, after the lookup latency; each host's own name resolves to its address.
extension SimulatedNetwork {
    /// How long a lookup takes before its answer (fixed, or drawn from the seeded generator for
    /// each lookup); 1 ms by default. An IP literal is answered at once, as the resolver does.
    public var lookupLatency: SimulatedLatency {
        get { names.latency }
        set { names.latency = newValue }
    }

    /// Makes `name` resolve to `addresses` (IP addresses, in the order lookups return them),
    /// replacing what it resolved to, and ending a ``failLookups(of:with:)`` of it. Names match
    /// without regard to case, as DNS names do.
    /// - Throws: `LoopError.invalidArgument` for an empty list or an entry that is not an
    ///   IP address.
    public func setName(_ name: String, addresses: [String]) throws(LoopError) {
        guard !addresses.isEmpty else {
            throw .invalidArgument("SimulatedNetwork.setName(\"\(name)\"): give at least one address (to make the name unknown, use removeName)")
        }
        var parsed: [String] = []
        for address in addresses {
            guard let ip = (try? SocketAddress(ip: address, port: 0))?.ip else {
                throw .invalidArgument("SimulatedNetwork.setName(\"\(name)\"): \(address) is not an IP address")
            }
            parsed.append(ip)
        }
        let key = name.lowercased()
        names.addresses[key] = parsed
        names.failures[key] = nil
        record("name \(name) -> \(parsed.joined(separator: ", "))")
    }

    /// Makes `name` unknown: its lookups fail with ``SimulatedLookupFailure/notFound`` (a host's
    /// own name then resolves to its address again).
    public func removeName(_ name: String) {
        names.addresses[name.lowercased()] = nil
        record("name \(name) removed")
    }

    /// Makes every lookup of `name` fail with `failure`, after the lookup latency, until
    /// ``answerLookups(of:)`` or ``setName(_:addresses:)``.
    public func failLookups(of name: String, with failure: SimulatedLookupFailure) {
        names.failures[name.lowercased()] = failure
        record("lookups of \(name) fail with \(failure)")
    }

    /// Ends a ``failLookups(of:with:)`` of `name`.
    public func answerLookups(of name: String) {
        names.failures[name.lowercased()] = nil
        record("lookups of \(name) answered")
    }

    /// The table, shared by the hosts' loops: made, and given to every host, on first use.
    var names: SimulatedNames {
        for host in hosts {
            if let table = host.loop.simulatedNameTable as? SimulatedNames { return adopt(table) }
        }
        return adopt(SimulatedNames())
    }

    private func adopt(_ table: SimulatedNames) -> SimulatedNames {
        for host in hosts where host.loop.simulatedNameTable == nil { host.loop.simulatedNameTable = table }
        return table
    }

    /// What a lookup of `name` answers now.
    func answer(for name: String) -> Result<[String], LoopError> {
        let key = name.lowercased()
        if let failure = names.failures[key] { return .failure(.libuv(function: "getaddrinfo", code: failure.code)) }
        if let addresses = names.addresses[key] { return .success(addresses) }
        if let host = hosts.first(where: { $0.name.lowercased() == key }) { return .success([host.address]) }
        return .failure(.libuv(function: "getaddrinfo", code: UV_EAI_NONAME.rawValue))
    }
}

extension SimulatedHost: NameSimulation {
    package func lookUp(_ host: String, _ answer: @escaping (Result<[String], LoopError>) -> Void) -> () -> Void {
        let withdrawn = SimulatedWithdrawal()
        let network = network
        if let literal = (try? SocketAddress(ip: host, port: 0))?.ip {
            network.schedule(at: network.now, host: index) { if !withdrawn.isWithdrawn { answer(.success([literal])) } }
            return { withdrawn.isWithdrawn = true }
        }
        let due = network.now.advanced(by: .nanoseconds(Int64(clamping: network.lookupLatency.draw(&network.random))))
        network.record("\(name) looks up \(host)")
        network.schedule(at: due, host: index) { [unowned network] in
            guard !withdrawn.isWithdrawn else { return }
            let result = network.answer(for: host)
            network.record("\(self.name)'s lookup of \(host): \(result)")
            answer(result)
        }
        return { withdrawn.isWithdrawn = true }
    }
}

/// Whether a lookup was withdrawn (cancelled) before its answer.
private final class SimulatedWithdrawal {
    var isWithdrawn = false
}
