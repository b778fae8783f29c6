import ServiceLifecycle
import UVLoop

/// A `LoopThread` (one loop on a thread of its own) as a swift-service-lifecycle
/// `Service`: the loop runs while the service group runs, and shuts down gracefully when the
/// service group shuts down.
///
/// ```swift
/// let thread = try Loop.startThread(name: "io")
/// let serviceGroup = ServiceGroup(services: [LoopThreadService(thread), server], logger: logger)
/// try await serviceGroup.run(watchingSignalsOn: thread.loop)   // until SIGTERM or SIGINT
/// ```
///
/// It behaves as ``LoopGroupService`` does for a group of one loop.
public struct LoopThreadService: Service, CustomStringConvertible {
    /// The loop's thread this service runs and shuts down.
    public let thread: LoopThread

    /// A service for `thread`, whose loop is already running.
    /// - Parameter thread: the loop's thread; the service shuts it down when it stops.
    public init(_ thread: LoopThread) {
        self.thread = thread
    }

    /// Waits until the service group triggers graceful shutdown or cancels this task, then shuts
    /// the loop down gracefully and waits for its thread to end (off Swift's cooperative thread
    /// pool). Call it once, as a service group does.
    /// - Throws: `LoopError.shutDown` when the loop shut down although the service group
    ///   had not asked it to.
    public func run() async throws {
        let thread = self.thread
        try await LoopService.run(loops: [thread.loop]) { () throws(LoopError) in thread.shutdown() }
    }

    /// The service's name in a service group's log.
    public var description: String { "LoopThreadService" }
}
