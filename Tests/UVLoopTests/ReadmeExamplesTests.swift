import XCTest
import CLibUV
import UVLoop
import UVLoopTesting

/// The README's examples, as written there, so that they keep compiling and working.
final class ReadmeExamplesTests: XCTestCase {
    func testTheLoopExample() throws {
        let thread = try Loop.startThread(name: "io")
        let loop = thread.loop
        try loop.post { print("soon, on the loop's thread") }
        let answer = try loop.invoke { 6 * 7 }
        try loop.postNextIteration { print("after the loop polled for I/O") }
        XCTAssertEqual(answer, 42)

        final class TableModel { var rows: [String] = []; func insert(_ row: String) { rows.append(row) } }
        let table = LoopBound(TableModel(), loop: loop)
        try table.post { $0.insert("now, soon") }
        let count = try table.invoke { $0.rows.count }
        try table.postNextIteration { $0.insert("next iteration") }
        XCTAssertEqual(count, 1)

        let total = LoopBound(0, loop: loop)
        let inbox = try loop.makeInbox(of: Int.self) { value in total.value += value }
        try inbox.send(42)
        inbox.close()
        try thread.shutdown()
        XCTAssertThrowsError(try inbox.send(1))
    }

    func testTheTimersExample() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let pings = LoopBound(0, loop: loop)
        let timer = try loop.schedule(after: .seconds(2)) { pings.value += 1 }
        XCTAssertTrue(timer.cancel())
        XCTAssertFalse(timer.fire())
        XCTAssertFalse(timer.isPending)
        let ticker = try loop.scheduleRepeating(every: .milliseconds(100), policy: .fixedRate) { pings.value += 1 }
        ticker.cancel()
        try await loop.sleep(for: .milliseconds(5))
        try thread.shutdown()
    }

    func testRetryFiresAfterBackoffUnlessCancelled() throws {
        let loop = try Loop.manual()
        let attempts = LoopBound([UInt64](), loop: loop)
        let retry = try loop.schedule(after: .milliseconds(250)) {
            attempts.value.append(loop.now.nanoseconds / 1_000_000)
        }
        try loop.advanceTime(by: .milliseconds(249))
        XCTAssertEqual(attempts.value, [])
        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(attempts.value, [250])
        XCTAssertFalse(retry.cancel())
    }

    func testTheEmbeddingExample() throws {
        let daemonLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { daemonLoop.deallocate() }
        XCTAssertEqual(uv_loop_init(daemonLoop), 0)
        let loop = try Loop.adopt(daemonLoop)
        try loop.post { }
        uv_run(daemonLoop, UV_RUN_NOWAIT)
        try loop.detach()
        uv_run(daemonLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(daemonLoop), 0)
    }
}
