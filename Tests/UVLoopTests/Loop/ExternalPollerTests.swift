import CLibUV
import Glibc
import XCTest
@testable import UVLoop
import UVTestSupport

/// An owner that embeds its libuv loop in a poller of its own, as libuv documents: it waits on
/// `uv_backend_fd` for `uv_backend_timeout` milliseconds and then runs one `uv_run(UV_RUN_NOWAIT)`.
/// Between its turns nothing of UVLoop runs, so after every turn either a send from another thread
/// must make the backend descriptor readable, or the timeout must be zero. The owner's own work
/// is a referenced one-minute timer (with nothing referenced active, libuv's timeout is zero).
final class ExternalPollerTests: XCTestCase {
    func testAnInboxSendAfterADeliveryTurnWakesAnExternalPoller() throws {
        let cLoop = makeCLoop()
        let ownersTimer = startOwnersTimer(cLoop)
        let loop = try Loop.attach(cLoop)
        let received = Recorder<Int>()
        let inbox = try loop.makeInbox(of: Int.self) { received.append($0) }
        for value in 0..<3 {
            onThreads(1) { _ in try! inbox.send(value) }
            XCTAssertTrue(turnUntil(cLoop, { received.values.count == value + 1 }), "message \(value) stranded")
        }
        XCTAssertEqual(received.values, [0, 1, 2])
        inbox.close()
        loop.detach()
        closeOwnersTimer(ownersTimer)
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
        cLoop.deallocate()
    }

    /// A post that arrives between UVLoop's prepare phase and the poll wakes the loop, and the
    /// poll phase runs it. The owner's own prepare handle, started before the attaching, runs
    /// after UVLoop's (libuv runs the newest first) and has another thread post in that window.
    /// A post after that turn must still wake the owner's poller.
    func testAPostAfterAPollPhaseDrainWakesAnExternalPoller() throws {
        let cLoop = makeCLoop()
        let ownersTimer = startOwnersTimer(cLoop)
        let received = Recorder<Int>()
        let ownersPrepare = UnsafeMutablePointer<uv_prepare_t>.allocate(capacity: 1)
        XCTAssertEqual(uv_prepare_init(cLoop, ownersPrepare), 0)
        XCTAssertEqual(uv_prepare_start(ownersPrepare) { _ in
            let post = PostInPrepare.post
            PostInPrepare.post = nil
            post?()
        }, 0)
        let loop = try Loop.attach(cLoop)
        PostInPrepare.post = { onThreads(1) { _ in try! loop.post { received.append(0) } } }
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(received.values, [0], "posted in the window, run by the poll phase")
        uv_prepare_stop(ownersPrepare)
        onThreads(1) { _ in try! loop.post { received.append(1) } }
        XCTAssertTrue(turnUntil(cLoop, { received.values.count == 2 }), "post 1 stranded")
        XCTAssertEqual(received.values, [0, 1])
        loop.detach()
        closeOwnersTimer(ownersTimer)
        uv_close(UnsafeMutableRawPointer(ownersPrepare).assumingMemoryBound(to: uv_handle_t.self)) { handle in
            handle?.deallocate()
        }
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
        cLoop.deallocate()
    }

    private func startOwnersTimer(_ cLoop: UnsafeMutablePointer<uv_loop_t>) -> UnsafeMutablePointer<uv_timer_t> {
        let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        XCTAssertEqual(uv_timer_init(cLoop, timer), 0)
        XCTAssertEqual(uv_timer_start(timer, { _ in }, 60_000, 0), 0)
        return timer
    }

    private func closeOwnersTimer(_ timer: UnsafeMutablePointer<uv_timer_t>) {
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self)) { handle in
            handle?.deallocate()
        }
    }

    /// The owner's turns: wait on the backend descriptor for the loop's timeout (at most 5 s, the
    /// bound of a wake-up that never comes), then one non-blocking `uv_run`, until `done`.
    /// - Returns: whether `done` became true before a wait ran out.
    private func turnUntil(_ cLoop: UnsafeMutablePointer<uv_loop_t>, _ done: () -> Bool) -> Bool {
        while !done() {
            let timeout = uv_backend_timeout(cLoop)
            var pollFD = pollfd(fd: uv_backend_fd(cLoop), events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollFD, 1, timeout < 0 || timeout > 5_000 ? 5_000 : timeout)
            if ready == 0 && timeout != 0 { return false }
            uv_run(cLoop, UV_RUN_NOWAIT)
        }
        // What the owner does after the delivery: more turns while the loop asks for them (a few).
        for _ in 0..<100 where uv_backend_timeout(cLoop) == 0 { uv_run(cLoop, UV_RUN_NOWAIT) }
        XCTAssertNotEqual(uv_backend_timeout(cLoop), 0, "the loop keeps asking for turns")
        return true
    }
}

/// What the owner's prepare callback in `testAPostAfterAPollPhaseDrainWakesAnExternalPoller`
/// runs once (a C callback captures nothing). Loop thread only.
private enum PostInPrepare {
    nonisolated(unsafe) static var post: (() -> Void)?
}
