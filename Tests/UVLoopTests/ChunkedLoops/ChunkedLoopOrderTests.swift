import XCTest
@testable import UVLoop
import UVLoopTesting

/// What a chunked loop calls and in what order: the first progress report, one chunk per loop
/// iteration with a report after each, then the completion; over counts, ranges and collections.
final class ChunkedLoopOrderTests: XCTestCase {
    func testSeedOrderProgressThenOneChunkPerIterationThenCompletion() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.startChunkedLoop(count: 7, budget: .items(3)) { index in
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
        }
        XCTAssertEqual(log.value, [], "nothing runs inline in the start call")

        func step() throws -> [String] {
            log.value = []
            try loop.runOnce()
            return log.value
        }
        XCTAssertEqual(try step(), ["progress 0/7"])
        XCTAssertEqual(try step(), ["body 0", "body 1", "body 2", "progress 3/7"])
        XCTAssertEqual(try step(), ["body 3", "body 4", "body 5", "progress 6/7"])
        XCTAssertEqual(try step(), ["body 6", "progress 7/7", "done finished 7/7 at -"])
        XCTAssertFalse(try loop.runOnce())
        XCTAssertEqual(log.value, ["body 6", "progress 7/7", "done finished 7/7 at -"])
    }

    func testReadmeSeedExample() throws {
        let loop = try Loop.manual()
        // A chunked loop over an array, with progress and completion, in the order they run.
        let myArray = ["a", "b", "c", "d", "e"]
        let shown = LoopBound([String](), loop: loop)

        try loop.startChunkedLoop(count: myArray.count) { run in
            // Get an object from the array using the `run` variable as the index
            let object = myArray[run]
            // Do something with `object`
            shown.value.append(object.uppercased())
        } progress: { progress in
            // Update the UI to show progress
            shown.value.append("\(Int(progress.fractionCompleted * 100))%")
        } completion: { completion in
            // Update the UI to show processing complete
            shown.value.append("done: \(completion.processed) items")
        }

        try loop.runUntilIdle()
        XCTAssertEqual(shown.value, ["0%", "A", "B", "C", "D", "E", "100%", "done: 5 items"])
    }

    func testZeroItemsReportsProgressThenCompletesWithoutCallingTheBody() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.startChunkedLoop(count: 0) { index in
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress) \(progress.fractionCompleted)")
        } completion: { completion in
            log.value.append(describe(completion))
            XCTAssertEqual(try? completion.get(), 0)
        }
        XCTAssertFalse(try loop.runOnce())
        XCTAssertEqual(log.value, ["progress 0/0 1.0", "done finished 0/0 at -"])
        XCTAssertEqual(activeIdleHandles(loop), 0)
    }

    func testRangeArrayAndNonRandomAccessCollections() throws {
        let loop = try Loop.manual()
        let seen = LoopBound([String](), loop: loop)
        try loop.startChunkedLoop(over: 3..<6, budget: .items(2)) { seen.value.append("r\($0)") }
        try loop.startChunkedLoop(over: ["x", "y", "z"], budget: .items(2)) { seen.value.append($0) }
        let set: Set<Int> = [10, 20, 30, 40, 50]
        try loop.startChunkedLoop(over: set, budget: .items(2)) { seen.value.append("s\($0)") }
        let failed = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        try loop.startChunkedLoop(over: ["p", "q", "r"] as ArraySlice) { element in
            if element == "q" { throw BodyFailure(index: 1) }
        } completion: { failed.value = $0 }
        try loop.runUntilIdle()
        XCTAssertEqual(seen.value.filter { $0.hasPrefix("r") }, ["r3", "r4", "r5"])
        XCTAssertEqual(seen.value.filter { ["x", "y", "z"].contains($0) }, ["x", "y", "z"])
        XCTAssertEqual(seen.value.filter { $0.hasPrefix("s") }, set.map { "s\($0)" }, "a Set is walked in its own order")
        XCTAssertEqual(failed.value?.stoppedAt, 1, "a collection reports the offset where it stopped")
        XCTAssertEqual(failed.value?.processed, 1)
    }
}
