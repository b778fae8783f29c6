import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

@MainLoopActor
final class MainLoopCounter {
    static let shared = MainLoopCounter()
    private(set) var value = 0

    func increment() -> Int {
        MainLoop.shared.preconditionOnLoopThread("MainLoopCounter.increment")
        value += 1
        return value
    }
}

/// The README's example.
@MainLoopActor final class Session {
    var requests = 0
    func handle() { requests += 1 }
}

@MainLoopActor
func mainLoopThreadCheck() -> Bool {
    MainLoop.shared.isOnLoopThread
}

/// The process-wide loop of this test process is chosen by first use: its own thread.
final class MainLoopActorTests: XCTestCase {
    func testMainLoopActorCodeRunsOnTheMainLoopThread() async throws {
        let onMainLoop = await mainLoopThreadCheck()
        XCTAssertTrue(onMainLoop)
        XCTAssertFalse(MainLoop.shared.isOnLoopThread, "the test's own thread is not the main loop's")
        XCTAssertTrue(MainLoop.isChosen)
        XCTAssertTrue(MainLoopActor.shared.loop === MainLoop.shared)
        let viaRun = await MainLoopActor.run { MainLoop.shared.isOnLoopThread }
        XCTAssertTrue(viaRun)
    }

    func testMainLoopActorFromManyOtherThreadsStaysSerial() async throws {
        let before = await MainLoopCounter.shared.value
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<100 { _ = await MainLoopCounter.shared.increment() }
                }
            }
        }
        let after = await MainLoopCounter.shared.value
        XCTAssertEqual(after - before, 400)
    }

    func testAssumeIsolatedInPostedWorkAndTimerCallbacksOfTheMainLoop() async throws {
        let loop = MainLoop.shared
        let posted = try await loop.invoke {
            MainLoopActor.assumeIsolated { MainLoopCounter.shared.increment() > 0 }
        }
        XCTAssertTrue(posted)
        let fromTimer: Bool = try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.schedule(after: .zero) {
                    continuation.resume(returning: MainLoopActor.assumeIsolated { mainLoopThreadCheck() })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        XCTAssertTrue(fromTimer)
        XCTAssertEqual(MainLoop.shared.isIsolatingCurrentContext(), false)
    }

    func testTheReadmeSession() async throws {
        let session = Session()
        await session.handle()
        try await MainLoop.shared.invoke {
            MainLoopActor.assumeIsolated { session.handle() }
        }
        try MainLoop.shared.post {
            MainLoopActor.assumeIsolated { session.handle() }
        }
        let requests = await session.requests
        XCTAssertEqual(requests, 3, "the post was queued before this hop")
    }

    func testInstallingAfterFirstUseThrows() throws {
        _ = MainLoop.shared
        let other = try Loop.startThread()
        XCTAssertThrowsError(try MainLoop.install(other.loop)) { error in
            XCTAssertEqual(error as? LoopError, .mainLoopAlreadyChosen)
        }
        other.shutdown()
    }

    // MARK: the choice itself, on slots of their own

    func testAnInstalledLoopIsTheOneUsed() throws {
        let slot = MainLoopSlot(threadName: "test-main")
        XCTAssertFalse(slot.isChosen)
        let thread = try Loop.startThread()
        try slot.install(thread.loop)
        XCTAssertTrue(slot.isChosen)
        XCTAssertTrue(slot.resolve() === thread.loop)
        XCTAssertTrue(slot.resolve() === thread.loop)
        XCTAssertThrowsError(try slot.install(thread.loop)) { error in
            XCTAssertEqual(error as? LoopError, .mainLoopAlreadyChosen)
        }
        thread.shutdown()
    }

    func testInstallingTwiceThrows() throws {
        let slot = MainLoopSlot(threadName: "test-main")
        let first = try Loop.startThread()
        let second = try Loop.startThread()
        try slot.install(first.loop)
        XCTAssertThrowsError(try slot.install(second.loop))
        XCTAssertTrue(slot.resolve() === first.loop)
        first.shutdown()
        second.shutdown()
    }

    func testFirstUseStartsALoopOnItsOwnThread() throws {
        let slot = MainLoopSlot(threadName: "test-main")
        let loop = slot.resolve()
        XCTAssertTrue(slot.resolve() === loop)
        XCTAssertFalse(loop.isOnLoopThread)
        XCTAssertTrue(try loop.invoke { loop.isOnLoopThread })
        XCTAssertThrowsError(try slot.install(loop))
    }

    /// The main thread's pattern (`MainLoop` documentation), with the test's thread in that role:
    /// a loop created here, installed, and run here.
    func testAnInstalledLoopRunByItsCreatingThread() throws {
        let slot = MainLoopSlot(threadName: "test-main")
        let loop = try Loop()
        try slot.install(loop)
        let log = Recorder<String>()
        Task(executorPreference: slot.resolve()) {
            log.append("on the creating thread, inside run(): \(loop.isOnLoopThread)")
            loop.shutdown()
        }
        try loop.run()
        XCTAssertEqual(log.values, ["on the creating thread, inside run(): true"])
    }
}
