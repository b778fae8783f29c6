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
        thread.shutdown()
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
        let loop = try Loop.attach(cLoop)
        let inbox = try loop.makeInbox(of: Int.self) { _ in }
        loop.detach()
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

    /// Senders that send while the loop keeps taking messages send no wake-up: the loop looks at
    /// the ring again before it polls, and clears the wake-up flag only once a look finds nothing
    /// new. From then on a send wakes the loop.
    func testSendsWhileTheLoopIsTakingMessagesSendNoWakeUp() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self) { received.append($0) }
        try inbox.send(0)
        XCTAssertTrue(isReadable(inbox.wake.fd), "the first send wakes the loop")
        try loop.runOnce()
        XCTAssertEqual(received.values, [0])
        try inbox.send(1)
        try inbox.send(2)
        XCTAssertFalse(isReadable(inbox.wake.fd), "the loop took a message this turn: no wake-up")
        XCTAssertTrue(try loop.runOnce(), "the loop still has a look to take")
        XCTAssertEqual(received.values, [0, 1, 2], "taken by the look before the poll")
        XCTAssertFalse(try loop.runOnce(), "a look that finds nothing new settles the inbox")
        try inbox.send(3)
        XCTAssertTrue(isReadable(inbox.wake.fd), "once settled, a send wakes the loop")
        try loop.runUntilIdle()
        XCTAssertEqual(received.values, [0, 1, 2, 3])
        loop.shutdown()
    }

    /// While senders stream, a look leaves the newest messages (64 of them) for the next turn, so
    /// that the loop does not read the cells the senders are writing; they arrive a turn later,
    /// in order, without a wake-up.
    func testTheNewestMessagesOfAStreamArriveOneTurnLater() throws {
        let loop = try Loop.manual()
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self) { received.append($0) }
        try inbox.send(0)
        try loop.runOnce()
        for value in 1...100 { try inbox.send(value) }
        try loop.runOnce()
        XCTAssertEqual(received.values, Array(0...36), "100 waiting: the look leaves the newest 64")
        try loop.runOnce()
        XCTAssertEqual(received.values, Array(0...100), "the stream stopped: the rest, whole")
        XCTAssertFalse(try loop.runOnce())
        XCTAssertFalse(isReadable(inbox.wake.fd))
        loop.shutdown()
    }

    /// Bursts of every size, each waited for before the next: the loop keeps switching between
    /// taking messages without wake-ups and sleeping until one comes. A wake-up lost in a switch
    /// would leave a burst undelivered and the producer waiting.
    func testBurstsSentAsTheLoopSettlesAreAllDelivered() throws {
        let thread = try Loop.startThread(name: "inbox-bursts")
        defer { thread.shutdown() }
        let received = Atomic<Int>(0)
        let expected = Atomic<Int>(0)
        let burstDone = Gate()
        let inbox = try thread.loop.makeInbox(of: Int.self) { _ in
            if received.add(1, ordering: .relaxed).newValue == expected.load(ordering: .relaxed) { burstDone.open() }
        }
        var total = 0
        for round in 0..<1_400 {
            let burst = [1, 2, 63, 64, 65, 130, 5_000][round % 7]
            total += burst
            expected.store(total, ordering: .relaxed)
            for value in 0..<burst { try inbox.send(value) }
            guard burstDone.pass() else { return XCTFail("round \(round): \(received.load(ordering: .relaxed)) of \(total) delivered") }
        }
        XCTAssertEqual(received.load(ordering: .relaxed), total)
        inbox.close()
    }

    /// Whether a wake-up is waiting on the inbox's descriptor.
    private func isReadable(_ fd: Int32) -> Bool {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pollFD, 1, 0) == 1
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
