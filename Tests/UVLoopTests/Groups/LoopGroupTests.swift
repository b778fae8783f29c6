import UVTestSupport
import XCTest
@testable import UVLoop

/// `LoopGroup`: loops on threads of their own, handed out round-robin, shut down together.
final class LoopGroupTests: XCTestCase {
    func testNextGoesRoundRobinOverEveryLoop() throws {
        let group = try LoopGroup(loopCount: 3)
        let handedOut = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        let loops = group.loops.map(ObjectIdentifier.init)
        XCTAssertEqual(handedOut, loops + loops)
        XCTAssertEqual(Set(loops).count, 3)
        group.shutdown()
    }

    func testAnyIsTheCallersOwnLoopOnAGroupThreadAndRoundRobinElsewhere() throws {
        let group = try LoopGroup(loopCount: 2)
        for loop in group.loops {
            let own = try loop.invoke { group.any() === loop }
            XCTAssertTrue(own)
        }
        let first = group.any()
        let second = group.any()
        XCTAssertFalse(first === second, "off the group's threads, any() is next()")
        group.shutdown()
    }

    func testEachLoopRunsOnItsOwnThreadWithEveryVerb() async throws {
        let group = try LoopGroup(loopCount: 2, name: "grp")
        for loop in group.loops {
            let fired = Gate()
            try loop.schedule(after: .milliseconds(1)) { fired.open() }
            fired.pass()
            let onLoop = try await loop.invoke { loop.isOnLoopThread }
            XCTAssertTrue(onLoop)
            let viaExecutor = await Task(executorPreference: loop) { loop.isOnLoopThread }.value
            XCTAssertTrue(viaExecutor)
        }
        var threads: [ThreadIdentity] = []
        for loop in group.loops { threads.append(try await loop.invoke { ThreadIdentity.current }) }
        XCTAssertNotEqual(threads[0], threads[1])
        group.shutdown()
    }

    func testShutdownRunsWhatWasPostedAndClosesEveryLoop() throws {
        let group = try LoopGroup(loopCount: 2)
        let ran = Counter()
        for loop in group.loops {
            for _ in 0..<1000 { try loop.post { _ = ran.increment() } }
        }
        group.shutdown()
        XCTAssertEqual(ran.value, 2000)
        for loop in group.loops {
            XCTAssertFalse(loop.isAcceptingWork)
            XCTAssertThrowsError(try loop.post {}) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        }
        group.shutdown()  // idempotent
    }

    // LoopGroup.shutdown() on one of the group's threads stops the program: the misuse
    // program's case group-shutdown-on-group-thread.

    func testALoopCountBelowOneIsRefused() {
        XCTAssertThrowsError(try LoopGroup(loopCount: 0)) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("at least 1 loop"), message)
        }
        XCTAssertGreaterThanOrEqual(LoopGroup.defaultLoopCount, 1)
    }

    func testReleasingTheGroupShutsItsLoopsDown() throws {
        var group: LoopGroup? = try LoopGroup(loopCount: 2)
        let loops = group!.loops
        group = nil
        for loop in loops { XCTAssertFalse(loop.isAcceptingWork) }
    }
}
