import XCTest
import Synchronization
@testable import UVEvents
@testable import UVLoop
import UVTestSupport
import UVLoopTesting

final class EventRegistryTests: XCTestCase {
    // MARK: the registry's rules, on the loop's thread

    func testSendRunsTheRegisteredMethodInlineWithItsTypedArgument() throws {
        let loop = try Loop.manual()
        let picker = Picker(loop: loop)
        let registry = EventRegistry(loop: loop)
        try registry.setTarget(picker)
        try registry.register(Picker.reset, for: PickerEvent.reset)
        try registry.register(Picker.lock, for: PickerEvent.lock)
        try registry.register(Picker.pick, for: PickerEvent.pick)

        XCTAssertTrue(try registry.send(PickerEvent.reset))
        XCTAssertTrue(try registry.send(PickerEvent.lock, true))
        XCTAssertTrue(try registry.send(PickerEvent.pick, "something"))
        // Inline: done before the loop turns.
        XCTAssertEqual(picker.log, ["reset", "lock(true)", "pick(something)"])
        XCTAssertEqual(picker.offLoopCalls, 0)
        XCTAssertTrue(registry.target === picker)
    }

    func testRegisteringForAKeyReplacesItsAction() throws {
        let loop = try Loop.manual()
        let picker = Picker(loop: loop)
        let registry = EventRegistry(loop: loop)
        try registry.target(picker, registering: .lock)
        try registry.register(Picker.unlock, for: PickerEvent.lock)
        XCTAssertTrue(try registry.send(PickerEvent.lock, false))
        XCTAssertEqual(picker.log, ["unlock(false)"])
    }

    func testSettingADifferentTargetRemovesEveryActionAndTheSameTargetKeepsThem() throws {
        let loop = try Loop.manual()
        let first = Picker(loop: loop)
        let second = Picker(loop: loop)
        let registry = EventRegistry(loop: loop)
        try registry.setTarget(first)
        try registry.register(Picker.reset, for: PickerEvent.reset)
        try registry.register(Picker.lock, for: PickerEvent.lock)

        try registry.setTarget(first)
        XCTAssertTrue(registry.hasAction(for: PickerEvent.reset))
        XCTAssertTrue(try registry.send(PickerEvent.reset))

        try registry.setTarget(second)
        XCTAssertFalse(registry.hasAction(for: PickerEvent.reset))
        XCTAssertFalse(registry.hasAction(for: PickerEvent.lock))
        XCTAssertFalse(try registry.send(PickerEvent.reset))
        XCTAssertFalse(try registry.send(PickerEvent.lock, true))
        XCTAssertEqual(first.log, ["reset"])
        XCTAssertEqual(second.log, [])
        XCTAssertTrue(registry.target === second)
    }

    func testRemoveActionAndRemoveAllActions() throws {
        let loop = try Loop.manual()
        let picker = Picker(loop: loop)
        let registry = EventRegistry(loop: loop)
        try registry.target(picker, registering: .reset, .lock, .pick)

        XCTAssertTrue(try registry.removeAction(for: PickerEvent.reset))
        XCTAssertFalse(try registry.removeAction(for: PickerEvent.reset))
        XCTAssertFalse(try registry.send(PickerEvent.reset))
        XCTAssertTrue(try registry.send(PickerEvent.lock, true))

        try registry.removeAllActions()
        XCTAssertFalse(try registry.send(PickerEvent.lock, true))
        XCTAssertFalse(try registry.send(PickerEvent.pick, "x"))
        XCTAssertFalse(registry.hasAction(for: PickerEvent.pick))
        XCTAssertTrue(registry.target === picker, "removing actions keeps the target")
        XCTAssertEqual(picker.log, ["lock(true)"])
    }

    func testNoActionOrNoTargetIsAClearFalseAndRegisteringWithoutTargetThrows() throws {
        let loop = try Loop.manual()
        let registry = EventRegistry(loop: loop)
        XCTAssertFalse(try registry.send(PickerEvent.reset))
        XCTAssertThrowsError(try registry.register(Picker.reset, for: PickerEvent.reset)) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("setTarget"), message)
        }
        let picker = Picker(loop: loop)
        try registry.setTarget(picker)
        XCTAssertFalse(try registry.send(PickerEvent.reset), "a target but no action for the key")
        XCTAssertEqual(picker.log, [])
    }

    func testRegisteringAMethodOfAnotherClassThrows() throws {
        let loop = try Loop.manual()
        let registry = EventRegistry(loop: loop)
        let picker = Picker(loop: loop)
        try registry.setTarget(picker)
        XCTAssertThrowsError(try registry.register(Swatch.pick, for: PickerEvent.pick)) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("Swatch") && message.contains("Picker"), message)
        }
        XCTAssertFalse(registry.hasAction(for: PickerEvent.pick))
        XCTAssertFalse(try registry.send(PickerEvent.pick, "x"))
    }

    func testATargetDeallocatedWithActionsRegisteredMakesSendsReturnFalse() throws {
        let loop = try Loop.manual()
        let registry = try registryWhoseTargetIsGone(on: loop, registering: [.reset, .lock])
        XCTAssertNil(registry.target)
        XCTAssertTrue(registry.hasAction(for: PickerEvent.reset), "only the loop notices, when it looks")
        XCTAssertFalse(try registry.send(PickerEvent.reset))
        XCTAssertFalse(registry.hasAction(for: PickerEvent.lock), "a dead target's actions are removed")
        XCTAssertFalse(try registry.send(PickerEvent.lock, true))
    }

    func testAnActionMayChangeTheRegistryWhileItRuns() throws {
        let loop = try Loop.manual()
        let registry = EventRegistry(loop: loop)
        let picker = Picker(loop: loop)
        try registry.target(picker, registering: .lock)
        // The action removes every action, then sends again: the second send finds nothing.
        try registry.register({ (picker: Picker) in
            { _ in
                picker.reset()
                try? registry.removeAllActions()
                XCTAssertEqual(try? registry.send(PickerEvent.lock, true), false)
            }
        }, for: PickerEvent.reset)
        XCTAssertTrue(try registry.send(PickerEvent.reset))
        XCTAssertEqual(picker.log, ["reset"])
    }

    // MARK: other threads

    func testASendFromAnotherThreadIsPostedAndReportsWhetherAnActionWasRegistered() throws {
        let loop = try Loop.manual()
        let registry = EventRegistry(loop: loop)
        let picker = Picker(loop: loop)
        try registry.target(picker, registering: .lock)

        let results = NativeMutex<[Bool]>([])
        onThreads(1) { _ in
            let registered = try? registry.send(PickerEvent.lock, true)
            let unregistered = try? registry.send(PickerEvent.reset)
            results.withLock { $0 = [registered ?? false, unregistered ?? true] }
        }
        XCTAssertEqual(results.withLock { $0 }, [true, false])
        XCTAssertEqual(picker.log, [], "posted, not run inline on the sending thread")
        try loop.runUntilIdle()
        XCTAssertEqual(picker.log, ["lock(true)"])
        XCTAssertEqual(picker.offLoopCalls, 0)
    }

    func testAPostedSendWhoseActionIsRemovedBeforeItRunsRunsNothing() throws {
        let loop = try Loop.manual()
        let registry = EventRegistry(loop: loop)
        let picker = Picker(loop: loop)
        try registry.target(picker, registering: .lock)
        XCTAssertTrue(sendLockFromAnotherThread(registry), "an action was registered at send time")
        try registry.removeAction(for: PickerEvent.lock)
        try loop.runUntilIdle()
        XCTAssertEqual(picker.log, [], "handled with the registrations of when it runs: none")
    }

    func testAPostedSendWhoseTargetIsDeallocatedBeforeItRunsRunsNothing() throws {
        let loop = try Loop.manual()
        let registry = try registryWhoseTargetIsGone(on: loop, registering: [.lock]) { registry in
            XCTAssertTrue(sendLockFromAnotherThread(registry))
        }
        try loop.runUntilIdle()
        XCTAssertFalse(registry.hasAction(for: PickerEvent.lock), "the loop found the target gone")
    }

    func testSendsFromFourThreadsArriveOnTheLoopThreadInPerThreadOrder() throws {
        let loopThread = try Loop.startThread(name: "events-test")
        let loop = loopThread.loop
        let registry = EventRegistry(loop: loop)
        let tick = EventKey<Tick>("tick")
        // The recorder is created on the loop's thread and kept alive there.
        let recorder = LoopBound<TickRecorder?>(nil, loop: loop)
        try recorder.invoke { slot in
            let target = TickRecorder(loop: loop)
            slot = target
            try registry.setTarget(target)
            try registry.register(TickRecorder.record, for: tick)
        }
        let refused = Atomic<Int>(0)
        onThreads(4) { sender in
            for index in 0..<1_000 where (try? registry.send(tick, Tick(sender: sender, index: index))) != true {
                refused.add(1, ordering: .relaxed)
            }
        }
        // Every send was posted before this invoke, so it runs after all of them.
        let (ticks, offLoopCalls) = try recorder.invoke { ($0!.ticks, $0!.offLoopCalls) }
        loopThread.shutdown()
        XCTAssertEqual(refused.load(ordering: .relaxed), 0)
        XCTAssertEqual(ticks.count, 4_000)
        XCTAssertEqual(offLoopCalls, 0)
        XCTAssertTrue(ticksArriveInPerSenderOrder(ticks, senders: 4, perSender: 1_000))
    }

    func testASendableTargetAndItsActionsCanBeSetFromAnotherThread() throws {
        let loopThread = try Loop.startThread(name: "events-test")
        let registry = EventRegistry(loop: loopThread.loop)
        let shared = SharedPicker(loop: loopThread.loop)
        try registry.setTarget(shared)
        try registry.register(SharedPicker.reset, for: PickerEvent.reset)
        try registry.register(SharedPicker.lock, for: PickerEvent.lock)
        // Each change has been applied when its call returns, so these sends see them.
        XCTAssertTrue(registry.hasAction(for: PickerEvent.lock))
        XCTAssertTrue(try registry.send(PickerEvent.reset))
        XCTAssertTrue(try registry.send(PickerEvent.lock, true))
        try registry.removeAction(for: PickerEvent.reset)
        XCTAssertFalse(try registry.send(PickerEvent.reset))
        loopThread.shutdown()
        XCTAssertEqual(shared.log.values, ["reset", "lock(true)"])
        XCTAssertEqual(shared.offLoopCalls.load(ordering: .relaxed), 0)
    }

    // A non-Sendable target set from another thread stops the program: the misuse program's
    // case registry-set-target-off-thread (scripts/check-misuse-messages).

    func testAfterShutdownChangesAndPostedSendsFromAnotherThreadThrow() throws {
        let loop = try Loop.manual()
        let registry = EventRegistry(loop: loop)
        let picker = Picker(loop: loop)
        try registry.target(picker, registering: .lock)
        loop.shutdown()
        let errors = NativeMutex<[LoopError]>([])
        onThreads(1) { _ in
            do throws(LoopError) { try registry.send(PickerEvent.lock, true) } catch { errors.withLock { $0.append(error) } }
            do throws(LoopError) { try registry.removeAllActions() } catch { errors.withLock { $0.append(error) } }
        }
        XCTAssertEqual(errors.withLock { $0 }, [.shutDown, .shutDown])
        XCTAssertTrue(registry.hasAction(for: PickerEvent.lock), "nothing changed")
        XCTAssertEqual(picker.log, [])
    }

    /// A registry on `loop` whose target, a `Picker` with `actions` registered, has been
    /// deallocated; `whileAlive` runs with the registry before the picker goes.
    private func registryWhoseTargetIsGone(
        on loop: Loop, registering actions: [PickerAction], whileAlive: (EventRegistry) throws -> Void = { _ in }
    ) throws -> EventRegistry {
        let registry = EventRegistry(loop: loop)
        weak var gone: Picker?
        do {
            let picker = Picker(loop: loop)
            gone = picker
            try registry.target(picker, registering: actions)
            try whileAlive(registry)
        }
        XCTAssertNil(gone, "the registry holds its target weakly")
        return registry
    }

    /// Sends `lock(true)` from another thread, which posts it to the loop; returns what the send
    /// returned (whether an action was registered then).
    private func sendLockFromAnotherThread(_ registry: EventRegistry) -> Bool {
        let sent = Atomic<Bool>(false)
        onThreads(1) { _ in
            sent.store((try? registry.send(PickerEvent.lock, true)) ?? false, ordering: .relaxed)
        }
        return sent.load(ordering: .relaxed)
    }
}
