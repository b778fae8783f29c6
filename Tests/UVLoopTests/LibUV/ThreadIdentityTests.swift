import XCTest
@testable import UVLoop

final class ThreadIdentityTests: XCTestCase {
    /// glibc reuses a joined thread's control block (its `pthread_t`) for the next thread it
    /// starts; a loop's thread must not be mistaken for a later thread after it ended.
    func testAThreadStartedAfterTheLoopThreadEndedIsNotTheLoopThread() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        thread.shutdown()
        for _ in 0..<8 {
            let later = try Loop.startThread()
            let sameAsOld = try later.loop.invoke { loop.isOnLoopThread }
            XCTAssertFalse(sameAsOld)
            later.shutdown()
        }
    }

    func testIdentityIsStableOnOneThreadAndDistinctAcrossThreads() throws {
        XCTAssertEqual(ThreadIdentity.current, ThreadIdentity.current)
        let thread = try Loop.startThread()
        let here = ThreadIdentity.current
        let there = try thread.loop.invoke { ThreadIdentity.current }
        XCTAssertNotEqual(here, there)
        XCTAssertEqual(there, thread.loop.thread)
        thread.shutdown()
    }
}
