import XCTest
@testable import UVLoop
import UVLoopTesting

/// How a chunked loop ends when it cannot finish: its body throws, its start is refused, or its
/// loop shuts down.
final class ChunkedLoopFailureTests: XCTestCase {
    func testThrowingBodyStopsTheLoopAndReportsTheErrorAndIndex() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let ended = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        let handle = try loop.startChunkedLoop(over: 10..<30, budget: .items(3)) { index in
            if index == 15 { throw BodyFailure(index: index) }
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
            ended.value = completion
        }
        try loop.runUntilIdle()
        guard case .failed(let error) = ended.value?.reason else { return XCTFail("\(String(describing: ended.value))") }
        XCTAssertEqual(error as? BodyFailure, BodyFailure(index: 15))
        XCTAssertThrowsError(try ended.value?.get()) { XCTAssertEqual($0 as? BodyFailure, BodyFailure(index: 15)) }
        XCTAssertEqual(log.value, [
            "progress 0/20", "body 10", "body 11", "body 12", "progress 3/20", "body 13", "body 14",
            "done failed(BodyFailure(index: 15)) 5/20 at 15",
        ])
        XCTAssertFalse(handle.isRunning)
        XCTAssertFalse(handle.cancel())
    }

    func testBadInputThrowsClearErrors() throws {
        let loop = try Loop.manual()
        func message(_ start: () throws(LoopError) -> ChunkedLoop) -> String {
            do {
                _ = try start()
                return "no error"
            } catch {
                return error.description
            }
        }
        XCTAssertEqual(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: -1) { _ in } },
            "invalid argument: a chunked loop's count must not be negative (got -1)")
        XCTAssertEqual(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .time(.zero)) { _ in } },
            "invalid argument: a chunked loop's time budget must be at least 1 nanosecond (got 0.0 seconds); use .items(n) to bound chunks by count")
        XCTAssertTrue(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .time(.milliseconds(-1))) { _ in } }
                .contains("time budget must be at least 1 nanosecond"))
        XCTAssertTrue(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .time(.nanoseconds(0.5))) { _ in } }
                .contains("time budget must be at least 1 nanosecond"))
        XCTAssertEqual(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .items(0)) { _ in } },
            "invalid argument: a chunked loop's chunk must hold at least 1 item (got .items(0))")
        XCTAssertTrue(
            message { () throws(LoopError) in try loop.startChunkedLoop(over: Int.min..<Int.max) { _ in } }
                .contains("holds more than Int.max integers"))
        XCTAssertFalse(try loop.runOnce(), "a refused start leaves nothing pending")
        loop.shutdown()
        XCTAssertThrowsError(try loop.startChunkedLoop(count: 1) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }

    func testShutdownEndsPendingChunkedLoopsWithTheirCompletions() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let ended = LoopBound([String: ChunkedLoopCompletion](), loop: loop)
        for name in ["begun", "cancelled", "waiting"] {
            let handle = try loop.startChunkedLoop(count: 10, budget: .items(2)) { _ in
            } progress: { progress in
                log.value.append("\(name) \(progress)")
            } completion: { completion in
                log.value.append("\(name) \(describe(completion))")
                ended.value[name] = completion
            }
            switch name {
            case "begun":
                try loop.runOnce()  // begins
                try loop.runOnce()  // items 0 and 1
            case "cancelled":
                try loop.runOnce()  // "begun" runs items 2 and 3; this one begins
                handle.cancel()     // seen by the shutdown before any chunk of it runs
            default:
                break               // never begins before the shutdown
            }
        }
        log.value = []
        loop.shutdown()
        XCTAssertEqual(log.value.sorted(), [
            "begun done loopShutDown 4/10 at 4",
            "cancelled done cancelled 0/10 at 0",
            "waiting 0/10",
            "waiting done loopShutDown 0/10 at 0",
        ].sorted())
        XCTAssertLessThan(
            log.value.firstIndex(of: "waiting 0/10")!, log.value.firstIndex(of: "waiting done loopShutDown 0/10 at 0")!)
        XCTAssertThrowsError(try ended.value["begun"]?.get()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }
}
