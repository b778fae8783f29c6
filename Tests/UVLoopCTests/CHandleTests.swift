import XCTest
import CLibUV
import CUVLoop
import Synchronization
import UVLoop
import UVLoopC
import UVTestSupport

/// A loop made in Swift, handed to C code through `makeCHandle()`, and reached back from a
/// `uvloop_t *` with `Loop.fromCHandle(_:)`.
final class CHandleTests: XCTestCase {
    /// What the C callbacks below count into: a C context pointer to a Swift object.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        let done = Gate()
    }

    func testCCodePostsToALoopMadeInSwiftFromItsOwnThreads() throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let handle = try thread.loop.makeCHandle()
        XCTAssertTrue(Loop.fromCHandle(handle) === thread.loop)
        XCTAssertNil(Loop.fromCHandle(nil))

        let counter = Counter()
        let onLoopThread = Mutex<Bool>(false)
        // Pointers are not Sendable: they cross to the C threads as their addresses.
        let handleAddress = UInt(bitPattern: handle)
        let counterAddress = UInt(bitPattern: Unmanaged.passUnretained(counter).toOpaque())
        onThreads(2) { _ in
            let handle = OpaquePointer(bitPattern: handleAddress)
            let context = UnsafeMutableRawPointer(bitPattern: counterAddress)
            for _ in 0..<5_000 {
                XCTAssertEqual(uvloop_post(handle, { context in
                    let counter = Unmanaged<Counter>.fromOpaque(context!).takeUnretainedValue()
                    if counter.value.add(1, ordering: .relaxed).newValue == 10_000 { counter.done.open() }
                }, context), 0)
            }
        }
        counter.done.pass()
        XCTAssertEqual(counter.value.load(ordering: .relaxed), 10_000)
        XCTAssertEqual(uvloop_invoke(handle, { _ in }, nil), 0)
        try thread.loop.invoke {
            onLoopThread.withLock { $0 = uvloop_is_loop_thread(OpaquePointer(bitPattern: handleAddress)) == 1 }
        }
        XCTAssertTrue(onLoopThread.withLock { $0 })
        XCTAssertEqual(uvloop_is_loop_thread(handle), 0)
        XCTAssertEqual(uvloop_detach(handle), UVLOOP_ENOTATTACHED, "a loop made in Swift is shut down in Swift")
        XCTAssertEqual(uvloop_release(handle), 0)
    }

    func testAfterShutdownCCallsSayTheLoopIsShutDown() throws {
        let thread = try Loop.startThread()
        let handle = try thread.loop.makeCHandle()
        thread.shutdown()
        XCTAssertEqual(uvloop_post(handle, { _ in }, nil), UVLOOP_ESHUTDOWN)
        XCTAssertEqual(uvloop_timer_start(handle, 0, 0, { _ in }, nil, nil), UVLOOP_ESHUTDOWN)
        XCTAssertEqual(String(cString: uvloop_strerror(UVLOOP_ESHUTDOWN)), "the loop has shut down and accepts no new work")
        XCTAssertEqual(uvloop_release(handle), 0)
        XCTAssertThrowsError(try thread.loop.makeCHandle()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    /// `uvloop_post` tells the loop's thread apart by its thread pointer, which a thread started
    /// after the loop's thread has exited may get (glibc reuses thread stacks): such a thread
    /// posts as any thread does, and gets the loop's refusal.
    func testAThreadStartedAfterTheLoopThreadExitedGetsTheRefusal() throws {
        let thread = try Loop.startThread()
        let handle = try thread.loop.makeCHandle()
        thread.shutdown()
        let handleAddress = UInt(bitPattern: handle)
        let results = Recorder<Int32>()
        for _ in 0..<4 {
            onThreads(1) { _ in
                results.append(uvloop_post(OpaquePointer(bitPattern: handleAddress), { _ in }, nil))
            }
        }
        XCTAssertEqual(results.values, Array(repeating: UVLOOP_ESHUTDOWN, count: 4))
        XCTAssertEqual(uvloop_release(handle), 0)
    }

    func testEveryLoopErrorHasACErrorCode() {
        XCTAssertEqual(LoopError.shutDown.cErrorCode, UVLOOP_ESHUTDOWN)
        XCTAssertEqual(LoopError.inboxClosed.cErrorCode, UVLOOP_ESHUTDOWN)
        XCTAssertEqual(LoopError.detached.cErrorCode, UVLOOP_EDETACHED)
        XCTAssertEqual(LoopError.wouldDeadlock(operation: "x").cErrorCode, UVLOOP_EDEADLOCK)
        XCTAssertEqual(LoopError.invalidArgument("x").cErrorCode, UVLOOP_EINVAL)
        XCTAssertEqual(LoopError.inboxFull(capacity: 2).cErrorCode, Int32(UV_ENOBUFS.rawValue))
        XCTAssertEqual(LoopError.libuv(function: "uv_poll_init", code: -24).cErrorCode, -24, "libuv's codes pass through")
        for code in [UVLOOP_ESHUTDOWN, UVLOOP_EDETACHED, UVLOOP_EINVAL, UVLOOP_ENOTLOOPTHREAD, UVLOOP_EDEADLOCK,
                     UVLOOP_EALREADY, UVLOOP_ENOTATTACHED, -24] {
            XCTAssertFalse(String(cString: uvloop_strerror(code)).isEmpty)
        }
        // A code that is no one's gets a static message (uv_strerror would allocate one).
        XCTAssertEqual(String(cString: uvloop_strerror(-123_456)), "unknown error")
        XCTAssertEqual(uvloop_strerror(-123_456), uvloop_strerror(-654_321))
    }
}
