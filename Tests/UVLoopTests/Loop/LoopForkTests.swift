import XCTest
import CLibUV
@testable import UVLoop
import UVTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `Loop.afterFork()`: a child process of fork(2) resets the loop and runs its own work, with
/// kernel objects of its own, while the parent goes on.
final class LoopForkTests: XCTestCase {
    func testAfterForkWithoutAForkDoesNothing() throws {
        let loop = try Loop()
        try loop.afterFork()
        let ran = LoopBound(false, loop: loop)
        try loop.post { ran.value = true }
        try loop.runUntilIdle()
        XCTAssertTrue(ran.value)
        loop.shutdown()
    }

    /// Runs `child` in a child process and returns its exit status (or 128 + the signal).
    private func inChild(_ child: () -> Int32) -> Int32 {
        let pid = fork()
        if pid == 0 {
            alarm(20)
            _exit(child())
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {}
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    func testAChildResetsTheLoopAndRunsItsOwnPostsAndTimersWhileTheParentGoesOn() throws {
        // ThreadSanitizer stops a child of a multi-threaded process that starts a thread
        // ("starting new threads after multi-threaded fork is not supported"), which this child
        // must do to post from another thread. The C tests (test_fork.c) cover fork in full.
        if dlsym(nil, "__tsan_init") != nil { throw XCTSkip("ThreadSanitizer does not support threads in a forked child") }
        let loop = try Loop()
        let fds = loop.engine.wake.fd
        let timerFD = loop.engine.wakeTimer.fd
        // Posted before the fork: it runs in both processes.
        let before = LoopBound(0, loop: loop)
        try loop.post { before.value += 1 }
        let status = inChild {
            do {
                try loop.afterFork()
                try loop.afterFork()  // reset already: does nothing
                guard loop.engine.wake.fd == fds, loop.engine.wakeTimer.fd == timerFD else { return 2 }
                let posts = LoopBound(0, loop: loop)
                let fired = LoopBound(false, loop: loop)
                // From another thread of the child: the wake-up is the child's own.
                let poster = try NativeThread.start {
                    for _ in 0..<100 { try? loop.post { posts.value += 1 } }
                }
                try loop.schedule(after: .milliseconds(1)) { fired.value = true }
                var turns = 0
                while (posts.value < 100 || !fired.value) && turns < 100_000 {
                    try loop.runOnce()
                    turns += 1
                }
                poster.join()
                guard posts.value == 100 else { return 3 }
                guard fired.value else { return 4 }
                guard before.value == 1 else { return 5 }
                loop.shutdown()
                return 0
            } catch {
                return 6
            }
        }
        XCTAssertEqual(status, 0, "the child's checks (2: descriptors moved, 3: posts, 4: timer, 5: pre-fork work, 6: a throw)")
        // The parent's loop goes on, untouched by the child.
        let fired = LoopBound(false, loop: loop)
        try loop.schedule(after: .milliseconds(1)) { fired.value = true }
        var turns = 0
        while !fired.value && turns < 100_000 {
            try loop.runOnce()
            turns += 1
        }
        XCTAssertTrue(fired.value)
        XCTAssertEqual(before.value, 1)
        loop.shutdown()
    }

    func testAfterForkOnAShutDownLoopInAChildThrows() throws {
        let loop = try Loop()
        loop.shutdown()
        let status = inChild {
            do throws(LoopError) {
                try loop.afterFork()
                return 1
            } catch {
                return error == .shutDown ? 0 : 2
            }
        }
        XCTAssertEqual(status, 0)
    }
}
