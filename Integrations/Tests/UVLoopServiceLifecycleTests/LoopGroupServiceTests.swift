import Logging
import Synchronization
import ServiceLifecycle
import UVLoop
import UVLoopServiceLifecycle
import XCTest

final class LoopGroupServiceTests: XCTestCase {
    private let logger = Logger(label: "test")

    func testGracefulShutdownOfTheServiceGroupShutsTheLoopsDown() async throws {
        let loops = try LoopGroup(loopCount: 2, name: "svc")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        let running = Task { try await serviceGroup.run() }
        await probe.started()
        XCTAssertTrue(loops.loops.allSatisfy(\.isAcceptingWork))
        let answer = try await loops.next().invoke { 6 * 7 }
        XCTAssertEqual(answer, 42, "the loops run while the service group runs")

        await serviceGroup.triggerGracefulShutdown()
        try await running.value

        XCTAssertEqual(probe.ended, .gracefulShutdown)
        XCTAssertFalse(loops.loops.contains(where: \.isAcceptingWork), "every loop was shut down")
        XCTAssertThrowsError(try loops.next().post {}) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testWorkPostedBeforeTheShutdownStillRuns() async throws {
        let loops = try LoopGroup(loopCount: 1, name: "svc")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        let running = Task { try await serviceGroup.run() }
        await probe.started()
        let ran = Mutex(0)
        let loop = loops.loops[0]
        for _ in 0..<100 { try loop.post { ran.withLock { $0 += 1 } } }

        await serviceGroup.triggerGracefulShutdown()
        try await running.value
        XCTAssertEqual(ran.withLock { $0 }, 100)
    }

    func testCancellingTheServiceGroupShutsTheLoopsDown() async throws {
        let loops = try LoopGroup(loopCount: 2, name: "svc")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        let running = Task { try await serviceGroup.run() }
        await probe.started()

        running.cancel()
        _ = try? await running.value

        XCTAssertEqual(probe.ended, .cancelled)
        XCTAssertFalse(loops.loops.contains(where: \.isAcceptingWork))
    }

    func testALoopThatShutsDownOnItsOwnStopsTheServiceGroupWithAnError() async throws {
        let loops = try LoopGroup(loopCount: 2, name: "svc")
        let probe = ProbeService()
        let serviceGroup = ServiceGroup(services: [LoopGroupService(loops), probe], logger: logger)
        let running = Task { try await serviceGroup.run() }
        await probe.started()

        loops.loops[1].shutdown()

        do {
            try await running.value
            XCTFail("the service group should report the loop's end")
        } catch {
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
        XCTAssertFalse(loops.loops.contains(where: \.isAcceptingWork), "the other loop was shut down too")
        XCTAssertEqual(probe.ended, .cancelled, "the service group cancelled the other services")
    }

    func testALoopThreadServiceShutsItsLoopDown() async throws {
        let thread = try Loop.startThread(name: "svc")
        let probe = ProbeService()
        let service = LoopThreadService(thread)
        XCTAssertEqual(service.description, "LoopThreadService")
        let serviceGroup = ServiceGroup(services: [service, probe], logger: logger)
        let running = Task { try await serviceGroup.run() }
        await probe.started()
        XCTAssertTrue(thread.loop.isAcceptingWork)

        await serviceGroup.triggerGracefulShutdown()
        try await running.value

        XCTAssertEqual(probe.ended, .gracefulShutdown)
        XCTAssertFalse(thread.loop.isAcceptingWork)
        thread.shutdown()  // shutting down again is harmless
    }

    func testRunningTheServiceOnALoopThatAlreadyShutDownThrowsShutDown() async throws {
        let loops = try LoopGroup(loopCount: 1, name: "svc")
        loops.shutdown()
        let service = LoopGroupService(loops)
        XCTAssertEqual(service.description, "LoopGroupService(1 loops)")
        do {
            try await service.run()
            XCTFail("a group that is already shut down cannot run")
        } catch {
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }
}
