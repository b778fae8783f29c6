import Glibc
import Logging
import ServiceLifecycle
import UVLoop
import UVLoopServiceLifecycle
import XCTest

final class ServiceGroupSignalTests: XCTestCase {
    private let logger = Logger(label: "test")

    func testSIGTERMTriggersGracefulShutdown() async throws {
        let loops = try LoopGroup(loopCount: 2, name: "sig")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        let running = Task { try await serviceGroup.run(watchingSignalsOn: loops.loops[0]) }
        // The watches are open before any service starts: the signal cannot end the process.
        await probe.started()

        XCTAssertEqual(kill(getpid(), SIGTERM), 0)
        try await running.value

        XCTAssertEqual(probe.ended, .gracefulShutdown)
        XCTAssertFalse(loops.loops.contains(where: \.isAcceptingWork))
    }

    func testSIGINTTriggersGracefulShutdownWhenWatchedOnALoopOutsideTheGroup() async throws {
        let watcher = try Loop.startThread(name: "sig-watch")
        let loops = try LoopGroup(loopCount: 1, name: "sig")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        let running = Task { try await serviceGroup.run(watchingSignalsOn: watcher.loop) }
        await probe.started()

        XCTAssertEqual(kill(getpid(), SIGINT), 0)
        try await running.value

        XCTAssertEqual(probe.ended, .gracefulShutdown)
        XCTAssertFalse(loops.loops[0].isAcceptingWork)
        XCTAssertTrue(watcher.loop.isAcceptingWork, "the watching loop is not part of the service group")
        watcher.shutdown()
    }

    func testACancellationSignalCancelsTheServiceGroup() async throws {
        let loops = try LoopGroup(loopCount: 1, name: "sig")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        let running = Task {
            try await serviceGroup.run(
                watchingSignalsOn: loops.loops[0], gracefulShutdownSignals: [.user2], cancellationSignals: [.user1])
        }
        await probe.started()

        XCTAssertEqual(kill(getpid(), SIGUSR1), 0)
        _ = try? await running.value

        XCTAssertEqual(probe.ended, .cancelled)
        XCTAssertFalse(loops.loops[0].isAcceptingWork)
    }

    func testASignalThatCannotBeWatchedIsRefusedBeforeAnyServiceStarts() async throws {
        let loops = try LoopGroup(loopCount: 1, name: "sig")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        do {
            try await serviceGroup.run(watchingSignalsOn: loops.loops[0], gracefulShutdownSignals: [Signal(SIGKILL)])
            XCTFail("SIGKILL cannot be watched")
        } catch let error as LoopError {
            guard case .invalidArgument(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("SIGKILL"), message)
        }
        XCTAssertNil(probe.ended, "no service ran")
        loops.shutdown()
    }

    func testWatchingOnALoopThatShutDownThrowsShutDown() async throws {
        let thread = try Loop.startThread(name: "sig-watch")
        thread.shutdown()
        let serviceGroup = ServiceGroup(services: [ProbeService()], logger: logger)
        do {
            try await serviceGroup.run(watchingSignalsOn: thread.loop)
            XCTFail("a shut-down loop cannot watch signals")
        } catch {
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }
}
