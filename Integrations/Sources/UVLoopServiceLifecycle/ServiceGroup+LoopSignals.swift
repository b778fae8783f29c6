import ServiceLifecycle
import UVLoop

extension ServiceGroup {
    /// Runs the service group, shutting it down gracefully when the process receives one of
    /// `gracefulShutdownSignals` and cancelling it on one of `cancellationSignals`: the signals
    /// are watched on `loop` (`Loop.signals(_:keepsOwnerLoopAlive:)`), not by the service
    /// group's own signal handling.
    ///
    /// ```swift
    /// let loops = try LoopGroup(loopCount: 2)
    /// let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), server], logger: logger)
    /// try await serviceGroup.run(watchingSignalsOn: loops.loops[0])   // until SIGTERM or SIGINT
    /// ```
    ///
    /// Configure the service group itself with no signals (its default), so that one handler
    /// owns each signal. The watches are open before the services start, and they stay open
    /// until the service group's run ends (or `loop` shuts down, which ends them): while they are
    /// open, the signals no longer end the process (see `SignalWatch`). A graceful
    /// shutdown signal that arrives again while the services stop changes nothing; send a
    /// cancellation signal to cut the shutdown short.
    ///
    /// Call it from any task, instead of `run()`; like `run()`, call it once.
    /// - Parameters:
    ///   - loop: the loop whose thread watches the signals; any running loop (a loop of a
    ///     ``LoopGroupService`` in this group shuts down last, after the other services).
    ///   - gracefulShutdownSignals: the signals that trigger the service group's graceful
    ///     shutdown (`triggerGracefulShutdown()`): `SIGTERM` and `SIGINT` by default.
    ///   - cancellationSignals: the signals that cancel the service group's run; none by default.
    /// - Throws: what the service group's `run()` throws; `LoopError.invalidArgument`
    ///   for a signal that cannot be watched, and `LoopError.shutDown` when `loop` no
    ///   longer accepts work, in which cases no service was started.
    public nonisolated func run(
        watchingSignalsOn loop: Loop,
        gracefulShutdownSignals: [Signal] = [.terminate, .interrupt],
        cancellationSignals: [Signal] = []
    ) async throws {
        // Opened here, before any service starts: a signal sent once a service runs is seen.
        var graceful: [SignalDeliveries] = []
        var cancelling: [SignalDeliveries] = []
        for signal in gracefulShutdownSignals { graceful.append(try loop.signals(signal)) }
        for signal in cancellationSignals { cancelling.append(try loop.signals(signal)) }

        enum Outcome: Sendable {
            case groupFinished
            case cancellationSignalled
            case watchEnded
        }
        try await withThrowingTaskGroup(of: Outcome.self) { tasks in
            tasks.addTask {
                try await self.run()
                return .groupFinished
            }
            for deliveries in graceful {
                tasks.addTask {
                    for await _ in deliveries { await self.triggerGracefulShutdown() }
                    return .watchEnded
                }
            }
            for deliveries in cancelling {
                tasks.addTask {
                    for await _ in deliveries { return .cancellationSignalled }
                    return .watchEnded
                }
            }
            while let outcome = try await tasks.next() {
                switch outcome {
                case .groupFinished:
                    tasks.cancelAll()   // ends the watches
                    return
                case .cancellationSignalled:
                    tasks.cancelAll()   // cancels the service group's run; wait for it to end
                case .watchEnded:
                    continue
                }
            }
        }
    }
}
