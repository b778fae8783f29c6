import XCTest
import UVLoop
import UVTestSupport

/// Work that captures its own loop (or a `LoopBound` of it) holds the loop while the work is
/// pending: releasing the last outside reference does not end such a loop. `shutdown()` does: it
/// releases everything the loop's pending work captured, and with it the loop.
final class ShutdownReleasesCapturesTests: XCTestCase {
    func testShutdownReleasesWhatPendingWorkCapturedAndTheLoopWithIt() throws {
        let released = Counter()
        weak var weakLoop: Loop?
        do {
            let loop = try Loop()
            weakLoop = loop
            let bound = LoopBound(0, loop: loop)
            func tracked() -> Tracked { Tracked { released.increment() } }
            let (timer, repeating, received, chunked, bounded) = (tracked(), tracked(), tracked(), tracked(), tracked())
            try loop.schedule(after: .seconds(3600)) { _ = loop; _ = timer }
            try loop.scheduleRepeating(every: .seconds(3600)) { _ = loop; _ = repeating }
            let inbox = try loop.makeInbox(of: Int.self) { _ in _ = loop; _ = received }
            try loop.startChunkedLoop(count: 1_000_000, budget: .items(1)) { _ in _ = loop; _ = chunked }
            try loop.schedule(after: .seconds(3600)) { bound.value += 1; _ = bounded }
            try loop.runOnce()
            XCTAssertEqual(released.value, 0, "pending work keeps what it captured")
            loop.shutdown()
            _ = inbox
        }
        XCTAssertEqual(released.value, 5, "shutdown released every capture of the loop's pending work")
        XCTAssertNil(weakLoop, "and nothing the loop's work captured keeps the loop alive")
    }

    func testWithoutShutdownPendingWorkThatCapturesTheLoopKeepsItAlive() throws {
        weak var weakLoop: Loop?
        do {
            let loop = try Loop()
            weakLoop = loop
            try loop.schedule(after: .seconds(3600)) { _ = loop }
        }
        XCTAssertNotNil(weakLoop, "the pending timer's closure holds its loop: the documented rule")
        weakLoop?.shutdown()
        XCTAssertNil(weakLoop, "shutdown cancels the timer, which releases the closure and the loop")
    }
}
