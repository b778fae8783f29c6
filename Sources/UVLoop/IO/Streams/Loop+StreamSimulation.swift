import CLibUV

/// The seam a simulated network (UVLoopTesting's `SimulatedNetwork`) plugs into: a loop with a
/// stream simulation opens its listeners and connections on it, and the simulation runs its
/// deliveries as the loop's own callbacks. Not public API.
extension Loop {
    /// Puts this loop on a simulated network: from now on `listen(on:)` and `connect(to:)` open
    /// simulated streams. Loop thread only; set once, before the loop opens a stream.
    package func setStreamSimulation(_ simulation: any StreamSimulation) {
        preconditionOnLoopThread("SimulatedNetwork.addHost")
        engine.ioHandles.streamSimulation = simulation
    }

    /// Runs `body`, one delivery of the simulated network (bytes arriving, a connect finishing), as
    /// one of the loop's I/O callbacks: inside a run of the loop (so that stepping it from the
    /// callback is refused as re-entrant), and finishing a shutdown or detach asked for inside.
    /// - Throws: `LoopError.shutDown` once the loop has shut down (`body` does not run).
    package func runSimulatedDelivery(_ body: () -> Void) throws(LoopError) {
        let engine = try enterRun("runUntilIdle()")
        defer { engine.isRunning = false }
        engine.runIOCallback(body)
        finishIfShutDown(engine)
    }

    /// The simulation this loop's streams open on; nil for a real loop (one load and a branch).
    /// - Throws: `LoopError.invalidArgument` when the loop's simulated network was released.
    @inline(__always)
    func streamSimulation() throws(LoopError) -> (any StreamSimulation)? {
        guard engine.ioHandles.isSimulated else { return nil }
        guard let simulation = engine.ioHandles.streamSimulation else {
            throw .invalidArgument(
                "this loop is a host of a simulated network that was released; keep the SimulatedNetwork alive while its hosts open streams")
        }
        return simulation
    }

    func openSimulatedListener(
        on address: SocketAddress, simulation: any StreamSimulation,
        handler: ((Result<StreamConnection, LoopError>) -> Void)?
    ) throws(LoopError) -> StreamListener {
        let simulated = SimulatedStream(simulation: simulation)
        let core = try StreamListenerCore(loop: self, simulated: simulated)
        do throws(LoopError) {
            try simulation.listen(simulated, on: address)
        } catch {
            core.close(reason: .streamClosed)
            throw error
        }
        core.handler = handler
        return StreamListener(core: core, address: simulated.localAddress ?? address)
    }

    func startSimulatedConnect(
        to address: SocketAddress, simulation: any StreamSimulation,
        _ completion: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) -> StreamConnectionCore {
        let simulated = SimulatedStream(simulation: simulation)
        let core = try StreamConnectionCore(loop: self, simulated: simulated)
        do throws(LoopError) {
            try simulated.connect(to: address) { [core] status in
                if status == 0, core.isOpen {
                    completion(.success(StreamConnection(core: core)))
                } else {
                    let error: LoopError = core.closeReason ?? .libuv(status, "connect")
                    core.close(reason: .streamClosed)
                    completion(.failure(error))
                }
            }
        } catch {
            core.close(reason: .streamClosed)
            throw error
        }
        return core
    }
}
