import CLibUV

/// What a simulated network (`SimulatedNetwork` in UVLoopTesting) does for the name lookups of
/// one host's loop, in place of the system's resolver. A loop whose stream simulation also
/// conforms to this protocol answers `resolve(host:port:)` (and so `connect(host:port:)`) from
/// it. Loop thread only.
package protocol NameSimulation: AnyObject {
    /// Starts looking `host` up: `answer` runs later, in a callback of the loop, with the host's
    /// IP addresses (as ``SocketAddress/ip`` spells them) in order of preference, or the
    /// resolver's error (`LoopError.libuv` with a `UV_EAI_*` code, function `getaddrinfo`).
    /// - Returns: a withdrawal: once called, `answer` must not run.
    func lookUp(_ host: String, _ answer: @escaping (Result<[String], LoopError>) -> Void) -> () -> Void
}

extension Loop {
    /// The simulated network's table of names, kept in each of its hosts' loops (the simulation's
    /// own type). Loop thread only.
    package var simulatedNameTable: AnyObject? {
        get {
            preconditionOnLoopThread("SimulatedNetwork's names")
            return engine.ioHandles.simulatedNameTable
        }
        set {
            preconditionOnLoopThread("SimulatedNetwork's names")
            engine.ioHandles.simulatedNameTable = newValue
        }
    }
}

extension AddressLookupRequest {
    /// Starts a lookup that `simulation` answers; no libuv request is made. `done` runs as for a
    /// real lookup: once, with the addresses (`port` set in each) or the error, or with
    /// `UV_EAI_CANCELED` after `cancel()`, from a job the loop runs next (also while it ends).
    static func startSimulated(
        on simulation: any NameSimulation, loop: Loop, host: String, port: UInt16,
        _ done: @escaping (Result<[SocketAddress], LoopError>) -> Void
    ) -> AddressLookupRequest {
        let lookup = AddressLookupRequest(done)
        let withdraw = simulation.lookUp(host) { [lookup] result in
            guard let simulated = lookup.simulated, !simulated.answered else { return }
            simulated.answered = true
            lookup.done(result.map { ips in ips.compactMap { try? SocketAddress(ip: $0, port: Int(port)) } })
        }
        lookup.simulated = SimulatedLookup(loop: loop, withdraw: withdraw)
        return lookup
    }

    /// Withdraws a simulated lookup not yet answered; `done` gets `UV_EAI_CANCELED` from a job the
    /// loop runs next, as libuv's callback reports a cancelled lookup in a later phase.
    func cancelSimulated(_ simulated: SimulatedLookup) {
        guard !simulated.answered else { return }
        simulated.answered = true
        simulated.withdraw()
        let box = LoopConfined(done)
        simulated.loop.engine.appendOwn(.run { box.value(.failure(.libuv(UV_EAI_CANCELED.rawValue, "getaddrinfo"))) })
    }
}

/// A simulated lookup's state: its loop, the simulation's withdrawal, and whether it was answered
/// (or withdrawn). Loop thread only.
final class SimulatedLookup {
    let loop: Loop
    let withdraw: () -> Void
    var answered = false

    init(loop: Loop, withdraw: @escaping () -> Void) {
        self.loop = loop
        self.withdraw = withdraw
    }
}
