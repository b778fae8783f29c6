import XCTest
import Synchronization
@testable import UVLoop
import UVTestSupport

/// Synchronous invokes that would make loops' threads wait for each other throw instead of
/// hanging (before, the second invoke blocked both threads forever).
final class InvokeCycleTests: XCTestCase {
    func testTwoLoopsInvokingEachOtherGetWouldDeadlockInsteadOfHanging() throws {
        let a = try Loop.startThread(name: "a")
        let b = try Loop.startThread(name: "b")
        defer {
            a.shutdown()
            b.shutdown()
        }
        let aIsWaiting = Gate()
        let inner = Mutex<Result<Int, LoopError>?>(nil)
        // A's thread blocks in b.invoke; B's work (run while A waits) invokes back on A.
        let outer = try a.loop.invoke {
            try b.loop.invoke { () -> Int in
                aIsWaiting.open()
                let result = Result { () throws(LoopError) -> Int in try a.loop.invoke { 1 } }
                inner.withLock { $0 = result }
                return 2
            }
        }
        aIsWaiting.pass()
        XCTAssertEqual(outer, 2, "the outer invoke completes: nothing hangs")
        guard case .failure(.wouldDeadlock(let operation)) = inner.withLock({ $0 }) else {
            return XCTFail("expected wouldDeadlock, got \(String(describing: inner.withLock { $0 }))")
        }
        XCTAssertEqual(operation, "invoke (the target loop's thread is itself blocked waiting for this thread)")
        XCTAssertTrue(a.loop.isAcceptingWork && b.loop.isAcceptingWork)
        // Afterwards both directions work again: the waits were forgotten.
        XCTAssertEqual(try a.loop.invoke { try b.loop.invoke { 3 } }, 3)
        XCTAssertEqual(try b.loop.invoke { try a.loop.invoke { 4 } }, 4)
    }

    func testALongerCycleIsFoundToo() throws {
        let loops = try (0..<3).map { try Loop.startThread(name: "cycle-\($0)") }
        defer { for thread in loops { thread.shutdown() } }
        let closing = Mutex<LoopError?>(nil)
        // 0 waits for 1, 1 waits for 2, and 2 invokes on 0.
        _ = try loops[0].loop.invoke {
            try loops[1].loop.invoke {
                try loops[2].loop.invoke { () -> Int in
                    do throws(LoopError) { _ = try loops[0].loop.invoke { 0 } } catch { closing.withLock { $0 = error } }
                    return 0
                }
            }
        }
        guard case .wouldDeadlock = closing.withLock({ $0 }) else {
            return XCTFail("expected wouldDeadlock, got \(String(describing: closing.withLock { $0 }))")
        }
    }

    /// Blocking invokes that form no cycle, from many threads at once, are not refused.
    func testChainsWithoutACycleAreNotRefused() throws {
        let a = try Loop.startThread(name: "a")
        let b = try Loop.startThread(name: "b")
        defer {
            a.shutdown()
            b.shutdown()
        }
        let refused = Atomic<Int>(0)
        onThreads(4) { _ in
            for _ in 0..<500 {
                do throws(LoopError) {
                    _ = try a.loop.invoke { () -> Int in
                        do throws(LoopError) { return try b.loop.invoke { 1 } } catch {
                            refused.add(1, ordering: .relaxed)
                            return 0
                        }
                    }
                } catch { refused.add(1, ordering: .relaxed) }
            }
        }
        XCTAssertEqual(refused.load(ordering: .relaxed), 0)
    }
}
