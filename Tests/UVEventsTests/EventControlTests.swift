import XCTest
import Synchronization
@testable import UVEvents
@testable import UVLoop
import UVTestSupport
import UVLoopTesting

final class EventControlTests: XCTestCase {
    func testPairsOfDifferentTargetsRunInTheOrderTheyWereAdded() throws {
        let loop = try Loop.manual()
        let control = EventControl(loop: loop)
        let first = Picker(loop: loop)
        let swatch = Swatch()
        let last = Picker(loop: loop)
        try control.addTarget(first, action: Picker.pick, for: PickerEvent.pick)
        try control.addTarget(swatch, action: Swatch.pick, for: PickerEvent.pick)
        try control.addTarget(last, action: Picker.pick, for: PickerEvent.pick)
        try control.addTarget(first, action: Picker.pick, for: PickerEvent.pick)
        try control.addTarget(last, action: Picker.reset, for: PickerEvent.reset)

        XCTAssertTrue(try control.send(PickerEvent.pick, "red"))
        XCTAssertEqual(first.log, ["pick(red)", "pick(red)"], "the same target added twice runs twice")
        XCTAssertEqual(swatch.log, ["swatch.pick(red)"])
        XCTAssertEqual(last.log, ["pick(red)"])

        // The order across targets: record it through one shared log.
        let order = LoopBound([String](), loop: loop)
        let ordered = EventControl(loop: loop)
        final class Named { let name: String; let order: LoopBound<[String]>
            init(_ name: String, _ order: LoopBound<[String]>) { self.name = name; self.order = order }
            func ping() { order.value.append(name) }
        }
        let targets = ["a", "b", "c", "d"].map { Named($0, order) }
        for target in targets { try ordered.addTarget(target, action: Named.ping, for: PickerEvent.reset) }
        try withExtendedLifetime(targets) { XCTAssertTrue(try ordered.send(PickerEvent.reset)) }
        XCTAssertEqual(order.value, ["a", "b", "c", "d"])
    }

    func testAConnectionRemovesExactlyItsPairOnce() throws {
        let loop = try Loop.manual()
        let control = EventControl(loop: loop)
        let picker = Picker(loop: loop)
        let lock = try control.addTarget(picker, action: Picker.lock, for: PickerEvent.lock)
        try control.addTarget(picker, action: Picker.unlock, for: PickerEvent.lock)
        XCTAssertTrue(try lock.remove())
        XCTAssertFalse(try lock.remove(), "idempotent")
        XCTAssertTrue(try control.send(PickerEvent.lock, true))
        XCTAssertEqual(picker.log, ["unlock(true)"])
    }

    func testRemoveTargetRemovesItsPairsForOneKeyOrForAll() throws {
        let loop = try Loop.manual()
        let control = EventControl(loop: loop)
        let picker = Picker(loop: loop)
        let other = Picker(loop: loop)
        try control.addTarget(picker, action: Picker.lock, for: PickerEvent.lock)
        try control.addTarget(other, action: Picker.lock, for: PickerEvent.lock)
        try control.addTarget(picker, action: Picker.unlock, for: PickerEvent.lock)
        try control.addTarget(picker, action: Picker.reset, for: PickerEvent.reset)
        try control.addTarget(picker, action: Picker.pick, for: PickerEvent.pick)

        XCTAssertEqual(try control.removeTarget(picker, for: PickerEvent.lock), 2)
        XCTAssertTrue(try control.send(PickerEvent.lock, true))
        XCTAssertEqual(picker.log, [])
        XCTAssertEqual(other.log, ["lock(true)"])
        XCTAssertTrue(try control.send(PickerEvent.reset))
        XCTAssertEqual(picker.log, ["reset"])

        XCTAssertEqual(try control.removeTarget(picker), 2)
        XCTAssertEqual(try control.removeTarget(picker), 0)
        XCTAssertFalse(try control.send(PickerEvent.reset))
        XCTAssertFalse(try control.send(PickerEvent.pick, "x"))
        XCTAssertFalse(control.hasTargets(for: PickerEvent.pick))
        XCTAssertTrue(control.hasTargets(for: PickerEvent.lock))
    }

    func testPairsAddedOrRemovedByAnActionTakeEffectFromTheNextPair() throws {
        let loop = try Loop.manual()
        let control = EventControl(loop: loop)
        let picker = Picker(loop: loop)
        // Reached from inside a @Sendable action, so held by a LoopBound.
        let late = LoopBound(Picker(loop: loop), loop: loop)
        let removedLater = NativeMutex<EventConnection?>(nil)
        // The first pair removes the third one and adds a fourth. It holds its control weakly: a
        // pair whose action holds its own control would keep the control alive.
        try control.addTarget(picker, action: { [weak control] (picker: Picker) in
            { _ in
                picker.reset()
                _ = try? removedLater.withLock { $0 }?.remove()
                _ = try? control?.addTarget(late.value, action: Picker.reset, for: PickerEvent.reset)
            }
        }, for: PickerEvent.reset)
        try control.addTarget(picker, action: Picker.lock, for: PickerEvent.lock)
        try control.addTarget(picker, action: { (picker: Picker) in { _ in picker.pick("second") } }, for: PickerEvent.reset)
        let third = try control.addTarget(picker, action: { (picker: Picker) in { _ in picker.pick("third") } }, for: PickerEvent.reset)
        removedLater.withLock { $0 = third }

        XCTAssertTrue(try control.send(PickerEvent.reset))
        XCTAssertEqual(picker.log, ["reset", "pick(second)"])
        XCTAssertEqual(late.value.log, [], "added during the send: runs from the next send on")
        XCTAssertTrue(try control.send(PickerEvent.reset))
        XCTAssertEqual(late.value.log, ["reset"])
    }

    func testADeallocatedTargetIsSkippedAndItsPairRemoved() throws {
        let loop = try Loop.manual()
        let control = EventControl(loop: loop)
        let survivor = Picker(loop: loop)
        weak var gone: Picker?
        let connection: EventConnection
        do {
            let picker = Picker(loop: loop)
            gone = picker
            connection = try control.addTarget(picker, action: Picker.lock, for: PickerEvent.lock)
        }
        try control.addTarget(survivor, action: Picker.lock, for: PickerEvent.lock)
        XCTAssertNil(gone)
        XCTAssertTrue(try control.send(PickerEvent.lock, true))
        XCTAssertEqual(survivor.log, ["lock(true)"])
        XCTAssertFalse(try connection.remove(), "the send already removed it")
        XCTAssertEqual(try control.removeTarget(survivor), 1)
        XCTAssertFalse(try control.send(PickerEvent.lock, true))
    }

    func testAControlWithOnlyDeallocatedTargetsReturnsFalse() throws {
        let loop = try Loop.manual()
        let control = EventControl(loop: loop)
        do {
            let picker = Picker(loop: loop)
            try control.addTarget(picker, action: Picker.reset, for: PickerEvent.reset)
        }
        XCTAssertTrue(control.hasTargets(for: PickerEvent.reset), "only the loop notices, when it looks")
        XCTAssertFalse(try control.send(PickerEvent.reset))
        XCTAssertFalse(control.hasTargets(for: PickerEvent.reset))
    }

    func testPostedSendsReportWhetherPairsWereThereAndRunPairsOfWhenTheyRun() throws {
        let loop = try Loop.manual()
        let control = EventControl(loop: loop)
        let picker = Picker(loop: loop)
        let lock = try control.addTarget(picker, action: Picker.lock, for: PickerEvent.lock)
        try control.addTarget(picker, action: Picker.pick, for: PickerEvent.pick)
        let results = NativeMutex<[Bool]>([])
        onThreads(1) { _ in
            let sends = [
                try? control.send(PickerEvent.lock, true),
                try? control.send(PickerEvent.pick, "blue"),
                try? control.send(PickerEvent.reset),
            ]
            results.withLock { $0 = sends.map { $0 ?? false } }
        }
        XCTAssertEqual(results.withLock { $0 }, [true, true, false])
        XCTAssertEqual(picker.log, [])
        XCTAssertTrue(try lock.remove())
        try loop.runUntilIdle()
        XCTAssertEqual(picker.log, ["pick(blue)"], "the lock pair was removed before the send ran")
        XCTAssertEqual(picker.offLoopCalls, 0)
    }

    func testSendsFromFourThreadsArriveOnTheLoopThreadInPerThreadOrder() throws {
        let loopThread = try Loop.startThread(name: "events-test")
        let loop = loopThread.loop
        let control = EventControl(loop: loop)
        let tick = EventKey<Tick>("tick")
        let recorders = LoopBound<[TickRecorder]>([], loop: loop)
        try recorders.invoke { recorders in
            recorders = [TickRecorder(loop: loop), TickRecorder(loop: loop)]
            for recorder in recorders { try control.addTarget(recorder, action: TickRecorder.record, for: tick) }
        }
        let refused = Atomic<Int>(0)
        onThreads(4) { sender in
            for index in 0..<1_000 where (try? control.send(tick, Tick(sender: sender, index: index))) != true {
                refused.add(1, ordering: .relaxed)
            }
        }
        let results = try recorders.invoke { recorders in recorders.map { ($0.ticks, $0.offLoopCalls) } }
        loopThread.shutdown()
        XCTAssertEqual(refused.load(ordering: .relaxed), 0)
        for (ticks, offLoopCalls) in results {
            XCTAssertEqual(ticks.count, 4_000)
            XCTAssertEqual(offLoopCalls, 0)
            XCTAssertTrue(ticksArriveInPerSenderOrder(ticks, senders: 4, perSender: 1_000))
        }
        XCTAssertEqual(results[0].0, results[1].0, "both pairs saw the sends in the same order")
    }

    // A non-Sendable target added from another thread stops the program: the misuse program's
    // case control-add-target-off-thread (scripts/check-misuse-messages).
    func testSendableTargetsCanBeAddedFromAnotherThread() throws {
        let loopThread = try Loop.startThread(name: "events-test")
        let control = EventControl(loop: loopThread.loop)
        let shared = SharedPicker(loop: loopThread.loop)
        let reset = try control.addTarget(shared, action: SharedPicker.reset, for: PickerEvent.reset)
        try control.addTarget(shared, action: SharedPicker.lock, for: PickerEvent.lock)
        XCTAssertTrue(try control.send(PickerEvent.reset))
        XCTAssertTrue(try control.send(PickerEvent.lock, false))
        XCTAssertTrue(try reset.remove())
        XCTAssertFalse(try control.send(PickerEvent.reset))

        try control.addTarget(shared, action: SharedPicker.reset, for: PickerEvent.reset)
        try control.addTarget(shared, action: SharedPicker.reset, for: PickerEvent.reset)
        XCTAssertEqual(try control.removeTarget(shared, for: PickerEvent.reset), 2, "removal needs only the identity")
        loopThread.shutdown()
        XCTAssertEqual(shared.log.values, ["reset", "lock(false)"])
        XCTAssertEqual(shared.offLoopCalls.load(ordering: .relaxed), 0)
        XCTAssertThrowsError(try control.send(PickerEvent.lock, true)) { error in
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }
}
