import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

struct TestFailure: Error, Equatable { let code: Int }

final class InvokeTests: XCTestCase {
    func testInvokeOnLoopThreadRunsInlineAndReturnsValue() throws {
        let loop = try Loop.manual()
        let order = Recorder<String>()
        try loop.post {
            order.append("before")
            let value = try? loop.invoke { () -> Int in order.append("inline"); return 7 }
            order.append("after \(value ?? -1)")
        }
        try loop.runUntilIdle()
        XCTAssertEqual(order.values, ["before", "inline", "after 7"])
        XCTAssertEqual(try loop.invoke { 5 }, 5, "the test thread is this loop's thread: inline")
    }

    func testInvokeFromAnotherThreadReturnsValueAndRethrowsError() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        XCTAssertEqual(try loop.invoke { loop.isOnLoopThread }, true)
        XCTAssertThrowsError(try loop.invoke { () throws -> Int in throw TestFailure(code: 3) }) { error in
            XCTAssertEqual(error as? TestFailure, TestFailure(code: 3))
        }
        thread.shutdown()
    }

    func testInvokeIsOrderedWithTheCallersPosts() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let log = LoopBound([Int](), loop: loop)
        for i in 0..<100 { try log.post { $0.append(i) } }
        let seen = try log.invoke { $0 }
        XCTAssertEqual(seen, Array(0..<100))
        thread.shutdown()
    }

    func testAsyncInvokeHopsToTheLoopAndBack() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let onLoop = try await loop.invoke { loop.isOnLoopThread }
        XCTAssertTrue(onLoop)
        let recorder = LoopRecorder(loop: loop)
        let inline = await recorder.invokeInline()
        XCTAssertEqual(inline, "inline on loop thread")
        thread.shutdown()
        do {
            _ = try await loop.invoke { 1 }
            XCTFail("invoke on a closed loop must throw")
        } catch {
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }

    func testInvokeOnAStoppedLoopThrows() throws {
        let thread = try Loop.startThread()
        thread.shutdown()
        XCTAssertThrowsError(try thread.loop.invoke { 1 }) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    /// Work that shutdown still runs may invoke inline;
    /// a loop that has finished shutting down refuses.
    func testInvokeInsideWorkThatShutdownRunsRunsInline() throws {
        let loop = try Loop()
        let state = LoopBound(41, loop: loop)
        let result = LoopBound<Result<Int, LoopError>?>(nil, loop: loop)
        try loop.post {
            result.value = Result { () throws(LoopError) -> Int in try state.invoke { $0 + 1 } }
        }
        loop.shutdown()
        XCTAssertEqual(try result.value?.get(), 42)
        XCTAssertThrowsError(try loop.invoke { 1 }) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    /// Values of every size reach the caller whole: small ones travel in the thread's own slot,
    /// those over its 64 bytes in memory of their own; an error leaves no trace on the next call.
    func testInvokeHandsBackValuesOfEverySizeAndForgetsAnError() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        struct Wide: Sendable { var words: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) }
        let wide = Wide(words: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
        for round in 0..<3 {
            XCTAssertEqual(try loop.invoke { "round \(round)" }, "round \(round)")
            XCTAssertEqual(try loop.invoke { wide }.words.9, 10)
            XCTAssertEqual(try loop.invoke { () throws -> [Int] in [round, round + 1] }, [round, round + 1])
            XCTAssertThrowsError(try loop.invoke { () throws -> Wide in throw TestFailure(code: round) }) { error in
                XCTAssertEqual(error as? TestFailure, TestFailure(code: round))
            }
            XCTAssertEqual(try loop.invoke { () throws -> Int in round }, round)
        }
        thread.shutdown()
    }

    /// Threads invoking at once each get their own values back, with and without the busy-poll
    /// window that makes a blocked caller poll for its result before it sleeps.
    func testConcurrentInvokesEachGetTheirOwnValueWithAndWithoutBusyPolling() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        for window in [Duration.zero, .microseconds(50)] {
            try loop.setBusyPoll(window)
            let failures = Atomic<Int>(0)
            onThreads(4) { worker in
                for i in 0..<200 where (try? loop.invoke { worker * 1_000 + i }) != worker * 1_000 + i {
                    failures.add(1, ordering: .relaxed)
                }
            }
            XCTAssertEqual(failures.load(ordering: .relaxed), 0)
        }
        thread.shutdown()
    }
}
