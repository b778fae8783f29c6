import ServiceLifecycle
import UVLoop

/// A `LoopGroup` as a swift-service-lifecycle `Service`: its loops run while the
/// service group runs, and shut down gracefully when the service group shuts down.
///
/// Add it to a `ServiceGroup` before the services that use the loops: a service group shuts its
/// services down in reverse order, so the loops then outlive the services that post to them.
///
/// ```swift
/// let loops = try LoopGroup(loopCount: 2)
/// let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), server], logger: logger)
/// try await serviceGroup.run(watchingSignalsOn: loops.loops[0])   // until SIGTERM or SIGINT
/// ```
///
/// ``run()`` waits until the service group triggers graceful shutdown or cancels the service's
/// task; then it shuts every loop down gracefully (each runs what was posted before, cancels its
/// timers and closes its handles, see `LoopGroup.shutdown()`) and returns once their
/// threads have ended. While it runs, each loop holds one timer that never fires: the service
/// learns through it when a loop ends on its own.
public struct LoopGroupService: Service, CustomStringConvertible {
    /// The loops this service runs and shuts down.
    public let group: LoopGroup

    /// A service for `group`, whose loops are already running.
    /// - Parameter group: the loops; the service shuts them down when it stops.
    public init(_ group: LoopGroup) {
        self.group = group
    }

    /// Waits until the service group triggers graceful shutdown or cancels this task, then shuts
    /// the loops down gracefully and waits for their threads to end.
    ///
    /// Waiting for the threads happens off Swift's cooperative thread pool. Call it once, as a
    /// service group does.
    /// - Throws: `LoopError.shutDown` when one of the loops shut down although the
    ///   service group had not asked it to (someone called `Loop.shutdown()`), after
    ///   shutting the others down: a service group then stops the other services too.
    public func run() async throws {
        let group = self.group
        try await LoopService.run(loops: group.loops) { group.shutdown() }
    }

    /// The service's name in a service group's log: `LoopGroupService(N loops)`.
    public var description: String { "LoopGroupService(\(group.loops.count) loops)" }
}
