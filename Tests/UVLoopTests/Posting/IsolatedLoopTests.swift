import Glibc
import XCTest

@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Loop-thread state that is not Sendable: what a server keeps per connection. Capturing it in a
/// `@Sendable` closure does not compile; every verb of `IsolatedLoop` takes it.
private final class LoopThreadState {
    var log: [String] = []
    var ticks = 0
}

/// `Loop.assumeIsolated()`: the loop's verbs with closures that are not `@Sendable`, for code on
/// the loop's thread. That each test compiles is half of what it checks: every closure captures
/// a `LoopThreadState`, which is not `Sendable`.
final class IsolatedLoopTests: XCTestCase {
    func testPostAndNextIterationRunClosuresThatCaptureLoopThreadState() throws {
        let loop = try Loop.manual()
        let session = LoopThreadState()
        let isolated = loop.assumeIsolated()
        try isolated.postNextIteration { session.log.append("next iteration") }
        try isolated.post {
            XCTAssertTrue(loop.isOnLoopThread)
            session.log.append("posted")
        }
        XCTAssertEqual(session.log, [], "never inline")
        try loop.runUntilIdle()
        XCTAssertEqual(session.log, ["posted", "next iteration"])
        XCTAssertTrue(isolated.loop === loop)
        loop.shutdown()
    }

    func testTimersRunClosuresThatCaptureLoopThreadState() throws {
        let loop = try Loop.manual()
        let session = LoopThreadState()
        let isolated = loop.assumeIsolated()
        try isolated.schedule(after: .seconds(2)) { session.log.append("after 2 s") }
        try isolated.schedule(at: LoopInstant(nanoseconds: 1_000_000_000)) { session.log.append("at 1 s") }
        let repeating = try isolated.scheduleRepeating(every: .milliseconds(500)) { session.ticks += 1 }
        try isolated.scheduleRepeating(every: .seconds(1), after: .zero) { timer in
            session.log.append("with its handle")
            timer.cancel()
        }
        try loop.advanceTime(by: .seconds(2))
        XCTAssertEqual(session.log, ["with its handle", "at 1 s", "after 2 s"])
        XCTAssertEqual(session.ticks, 4)
        XCTAssertTrue(repeating.cancel())
        loop.shutdown()
    }

    func testWatchesRunHandlersThatCaptureLoopThreadState() throws {
        let loop = try Loop()
        let session = LoopThreadState()
        let isolated = loop.assumeIsolated()
        let signalWatch = try isolated.watchSignal(.user1) { watch in
            session.log.append("\(watch.signal)")
        }
        raise(SIGUSR1)
        try step(loop) { session.log.count == 1 }
        XCTAssertTrue(signalWatch.cancel())

        let (readEnd, writeEnd) = makePipe()
        let descriptorWatch = try isolated.watchDescriptor(readEnd, for: .readable) { watch, result in
            session.log.append("readable: \((try? result.get()) == .readable)")
            watch.cancel()
        }
        XCTAssertEqual(write(writeEnd, "x", 1), 1)
        try step(loop) { session.log.count == 2 }
        XCTAssertFalse(descriptorWatch.isActive)
        XCTAssertEqual(session.log, ["\(Signal.user1)", "readable: true"])
        close(readEnd)
        close(writeEnd)
        loop.shutdown()
    }

    func testAChunkedLoopRunsClosuresThatCaptureLoopThreadState() throws {
        let loop = try Loop.manual()
        let session = LoopThreadState()
        let chunked = try loop.assumeIsolated().startChunkedLoop(
            count: 5, budget: .items(2),
            body: { index in session.ticks += index },
            progress: { progress in session.log.append("\(progress)") },
            completion: { completion in session.log.append("done: \(completion.processed)") })
        try loop.runUntilIdle()
        XCTAssertFalse(chunked.isRunning)
        XCTAssertEqual(session.ticks, 0 + 1 + 2 + 3 + 4)
        XCTAssertEqual(session.log, ["0/5", "2/5", "4/5", "5/5", "done: 5"])
        loop.shutdown()
    }

    func testTheVerbsRefuseWorkLikeTheLoopsOwn() throws {
        let loop = try Loop.manual()
        let isolated = loop.assumeIsolated()
        loop.shutdown()
        let session = LoopThreadState()
        XCTAssertThrowsError(try isolated.post { session.ticks += 1 }) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try isolated.schedule(after: .zero) { session.ticks += 1 }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
        XCTAssertThrowsError(try isolated.scheduleRepeating(every: .zero) { session.ticks += 1 }) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(session.ticks, 0)
    }

    // From another thread, assumeIsolated() and the view's verbs stop the program: the misuse
    // program's cases assume-isolated-off-thread and isolated-post-off-thread.
}
