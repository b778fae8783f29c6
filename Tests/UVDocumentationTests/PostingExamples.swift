import UVLoop
import XCTest

// docs:begin table-model
final class TableModel {
    var rows: [String] = []
    func insert(_ row: String) { rows.append(row) }
}
// docs:end

/// The examples of Posting.md, run for real.
final class PostingExamples: XCTestCase {
    func testLoopBound() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        // docs:begin loop-bound
        let table = LoopBound(TableModel(), loop: loop)
        try table.post { $0.insert("soon") }                    // runs on the loop's thread
        let count = try table.invoke { $0.rows.count }          // waits: 1
        try table.postNextIteration { $0.insert("next iteration") }
        // docs:end
        XCTAssertEqual(count, 1)
        XCTAssertEqual(try table.invoke { $0.rows.first }, "soon")
        thread.shutdown()
    }

    func testInvokeRethrows() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        // docs:begin invoke-throws
        struct NotFound: Error {}
        do {
            let _: Int = try loop.invoke { throw NotFound() }   // rethrown on the calling thread
        } catch is NotFound {
            print("the error came back")
        }
        let inline = try loop.invoke { try loop.invoke { 1 } }  // inline on the loop's thread: no deadlock
        // docs:end
        XCTAssertEqual(inline, 1)
        thread.shutdown()
    }

    func testInbox() throws {
        let loop = try Loop()                  // this thread is the loop's thread: the test steps it
        // docs:begin inbox
        let total = LoopBound(0, loop: loop)
        let inbox = try loop.makeInbox(of: Int.self) { value in total.value += value }
        try inbox.send(40)        // any thread; in order per sending thread; no allocation
        try inbox.send(2)
        inbox.close()             // later sends throw; values already sent are still delivered
        // docs:end
        _ = try loop.runUntilIdle()
        XCTAssertEqual(total.value, 42)
        XCTAssertThrowsError(try inbox.send(1))
        loop.shutdown()
    }

    func testOrderPerThread() throws {
        // docs:begin order
        let loop = try Loop()
        let order = LoopBound([String](), loop: loop)
        try loop.postNextIteration { order.value.append("next iteration") }
        try loop.post { order.value.append("first post") }
        try loop.post { order.value.append("second post") }
        _ = try loop.runUntilIdle()
        // order.value == ["first post", "second post", "next iteration"]
        // docs:end
        XCTAssertEqual(order.value, ["first post", "second post", "next iteration"])
        loop.shutdown()
    }
}
