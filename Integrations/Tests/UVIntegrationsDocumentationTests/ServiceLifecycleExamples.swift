import Glibc
import Logging
import ServiceLifecycle
import Synchronization
import UVLoop
import UVLoopServiceLifecycle
import XCTest

/// The server of the examples: a service that says when it has started, and waits for graceful
/// shutdown.
private final class ExampleServer: Service, Sendable {
    private let startedStream: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation
    let stoppedGracefully = Mutex(false)

    init() {
        (startedStream, startedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    func run() async throws {
        startedContinuation.yield()
        try await gracefulShutdown()
        stoppedGracefully.withLock { $0 = true }
    }

    /// Waits until the server runs, then sends the process SIGTERM (watched by then).
    func terminateOnceStarted() -> Task<Void, Never> {
        Task {
            for await _ in startedStream { break }
            kill(getpid(), SIGTERM)
        }
    }
}

final class ServiceLifecycleExamples: XCTestCase {
    private let logger = Logger(label: "example")

    func testLoopGroupServiceExample() async throws {
        let server = ExampleServer()
        let terminate = server.terminateOnceStarted()
        let logger = self.logger
        // docs:begin loop-group-service
        let loops = try LoopGroup(loopCount: 2)
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), server], logger: logger)
        try await serviceGroup.run(watchingSignalsOn: loops.loops[0])   // until SIGTERM or SIGINT
        // docs:end
        await terminate.value
        XCTAssertTrue(server.stoppedGracefully.withLock { $0 })
        XCTAssertFalse(loops.loops.contains(where: \.isAcceptingWork))
    }

    func testLoopThreadServiceExample() async throws {
        let server = ExampleServer()
        let terminate = server.terminateOnceStarted()
        let logger = self.logger
        // docs:begin loop-thread-service
        let thread = try Loop.startThread(name: "io")
        let serviceGroup = ServiceGroup(services: [LoopThreadService(thread), server], logger: logger)
        try await serviceGroup.run(watchingSignalsOn: thread.loop)   // until SIGTERM or SIGINT
        // docs:end
        await terminate.value
        XCTAssertTrue(server.stoppedGracefully.withLock { $0 })
        XCTAssertFalse(thread.loop.isAcceptingWork)
    }
}
