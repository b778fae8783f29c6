import CLibUV
import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

final class InboxTests: XCTestCase {
    func testValuesArriveInSendingOrderAndNeverInline() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self) { received.append($0) }
        for value in 0..<5 { try inbox.send(value) }
        XCTAssertEqual(received.values, [], "send must never run the receiver inline")
        try loop.runUntilIdle()
        XCTAssertEqual(received.values, [0, 1, 2, 3, 4])
        loop.shutdown()
    }

    /// Four producers against a small ring: they fill it and wait for room, and every value is
    /// still delivered exactly once, in each producer's order.
    func testFourProducersThroughAFullRingDeliverEveryValueOnceInPerProducerOrder() throws {
        let thread = try Loop.startThread(name: "inbox-test")
        let perProducer = 5_000
        let lastSeen = LoopBound([Int](repeating: -1, count: 4), loop: thread.loop)
        let outOfOrder = Atomic<Int>(0)
        let count = Atomic<Int>(0)
        let inbox = try thread.loop.makeInbox(of: (producer: Int, value: Int).self, capacity: 64) { message in
            if message.value != lastSeen.value[message.producer] + 1 { outOfOrder.add(1, ordering: .relaxed) }
            lastSeen.value[message.producer] = message.value
            count.add(1, ordering: .relaxed)
        }
        onThreads(4) { producer in
            for value in 0..<perProducer { try! inbox.send((producer: producer, value: value)) }
        }
        inbox.close()
        try thread.shutdown()
        XCTAssertEqual(count.load(ordering: .relaxed), 4 * perProducer)
        XCTAssertEqual(outOfOrder.load(ordering: .relaxed), 0)
    }

    /// The loop's thread cannot wait for itself to drain a full inbox: it gets an error that says
    /// what to do, and nothing it sent before is lost.
    func testAFullInboxThrowsOnTheLoopThreadAndTakesValuesAgainOnceDrained() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self, capacity: 4) { received.append($0) }
        for value in 0..<4 { try inbox.send(value) }
        XCTAssertThrowsError(try inbox.send(4)) { error in
            XCTAssertEqual(error as? LoopError, .inboxFull(capacity: 4))
            XCTAssertTrue("\(error)".contains("larger capacity"), "\(error)")
        }
        try loop.runUntilIdle()
        try inbox.send(5)
        try loop.runUntilIdle()
        XCTAssertEqual(received.values, [0, 1, 2, 3, 5])
        loop.shutdown()
    }

    func testCloseDeliversWhatWasSentAndLaterSendsThrow() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self) { received.append($0) }
        try inbox.send(1)
        try inbox.send(2)
        inbox.close()
        XCTAssertThrowsError(try inbox.send(3)) { error in
            XCTAssertEqual(error as? LoopError, .inboxClosed, "the inbox is closed, not the loop")
            XCTAssertTrue("\(error)".contains("makeInbox"), "\(error)")
        }
        XCTAssertTrue(loop.isAcceptingWork)
        try loop.runUntilIdle()
        XCTAssertEqual(received.values, [1, 2])
        inbox.close()
        loop.shutdown()
    }

    func testLoopShutdownDeliversPendingValuesThenRefusesSends() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self) { received.append($0) }
        for value in 0..<3 { try inbox.send(value) }
        loop.shutdown()
        XCTAssertEqual(received.values, [0, 1, 2])
        XCTAssertThrowsError(try inbox.send(3)) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testSendsToAnInboxOfADetachedLoopSayTheLoopWasDetached() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.adopt(cLoop)
        let inbox = try loop.makeInbox(of: Int.self) { _ in }
        try loop.detach()
        XCTAssertThrowsError(try inbox.send(1)) { XCTAssertEqual($0 as? LoopError, .detached) }
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testEachWakeUpDeliversAtMostThePostBudget() throws {
        try withTwentyFiveMessagesUnderABudgetOfTen { loop, received in
            try loop.runOnce()
            XCTAssertEqual(received.values.count, 10)
            for _ in 0..<2 { try loop.runOnce() }
            XCTAssertEqual(received.values, Array(0..<25))
            loop.shutdown()
        }
    }

    func testACapacityThatIsNotAPowerOfTwoIsRejected() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.makeInbox(of: Int.self, capacity: 1000) { _ in }) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("power of two"), message)
        }
        loop.shutdown()
    }

    func testRunUntilIdleDeliversMessagesBeyondOneBudget() throws {
        try withTwentyFiveMessagesUnderABudgetOfTen { loop, received in
            try loop.runUntilIdle()
            XCTAssertEqual(received.values, Array(0..<25), "three wake-ups of 10, 10 and 5 messages")
            loop.shutdown()
        }
    }

    /// Runs `body` with a manual loop whose post budget is 10 and a live inbox that has been sent
    /// 0..<25, none delivered yet; `received` records deliveries.
    private func withTwentyFiveMessagesUnderABudgetOfTen(_ body: (_ loop: Loop, _ received: Recorder<Int>) throws -> Void) throws {
        let loop = try Loop(clock: .manual, postBudget: 10)
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self, capacity: 64) { received.append($0) }
        for value in 0..<25 { try inbox.send(value) }
        try withExtendedLifetime(inbox) { try body(loop, received) }
    }
}
