import XCTest
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// `Inbox.trySend(_:)`: a full inbox refuses at once, on any thread, and loses nothing it took.
final class InboxTrySendTests: XCTestCase {
    func testAFullInboxRefusesFromAnotherThreadWithoutWaiting() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self, capacity: 4) { received.append($0) }
        let outcomes = Recorder<Bool>()
        onThreads(1) { _ in
            for value in 0..<6 { outcomes.append((try? inbox.trySend(value)) ?? false) }
        }
        XCTAssertEqual(outcomes.values, [true, true, true, true, false, false])
        try loop.runUntilIdle()
        XCTAssertEqual(received.values, [0, 1, 2, 3])
        onThreads(1) { _ in XCTAssertEqual(try? inbox.trySend(4), true) }
        try loop.runUntilIdle()
        XCTAssertEqual(received.values, [0, 1, 2, 3, 4])
        loop.shutdown()
    }

    func testOnTheLoopsThreadAFullInboxRefusesInsteadOfThrowing() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self, capacity: 2) { received.append($0) }
        XCTAssertTrue(try inbox.trySend(0))
        XCTAssertTrue(try inbox.trySend(1))
        XCTAssertFalse(try inbox.trySend(2))
        try loop.runUntilIdle()
        XCTAssertEqual(received.values, [0, 1])
        loop.shutdown()
    }

    func testAClosedInboxThrows() throws {
        let loop = try Loop.manual()
        let inbox = try loop.makeInbox(of: Int.self, capacity: 2) { _ in }
        inbox.close()
        XCTAssertThrowsError(try inbox.trySend(0)) { XCTAssertEqual($0 as? LoopError, .inboxClosed) }
        loop.shutdown()
        let other = try Loop.manual()
        let open = try other.makeInbox(of: Int.self, capacity: 2) { _ in }
        other.shutdown()
        XCTAssertThrowsError(try open.trySend(0)) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }
}
