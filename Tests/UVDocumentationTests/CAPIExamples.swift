import CUVLoop
import Synchronization
import UVLoop
import UVLoopC
import XCTest

// The Swift examples of UVLoopC.docc (the article "Embedding UVLoop in a C program"), run for real.

// docs:begin capi-component
/// The running component's inbox: C threads send their values through it.
let meterInbox = Mutex<Inbox<UInt64>?>(nil)

/// `int meter_component_start(uvloop_t *l);` on the loop thread.
@c public func meter_component_start(_ handle: OpaquePointer?) -> Int32 {
    guard let loop = Loop.fromCHandle(handle) else { return UVLOOP_EINVAL }
    guard loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    let total = LoopBound(UInt64(0), loop: loop)      // the component's state, loop thread only
    do {
        let inbox = try loop.makeInbox(of: UInt64.self) { value in total.value += value }
        meterInbox.withLock { $0 = inbox }
        return 0
    } catch {
        return error.cErrorCode
    }
}

/// `int meter_component_record(uint64_t value);` from any thread: no lock, no allocation.
@c public func meter_component_record(_ value: UInt64) -> Int32 {
    guard let inbox = meterInbox.withLock({ $0 }) else { return UVLOOP_ESHUTDOWN }
    do {
        try inbox.send(value)
        return 0
    } catch {
        return error.cErrorCode
    }
}
// docs:end

final class CAPIExamples: XCTestCase {
    func testAComponentStartsOnTheLoopThreadAndTakesValuesFromAnyThread() throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let handle = try thread.loop.makeCHandle()
        defer { uvloop_release(handle) }
        XCTAssertEqual(meter_component_start(handle), UVLOOP_ENOTLOOPTHREAD)
        XCTAssertEqual(meter_component_record(1), UVLOOP_ESHUTDOWN)
        let address = UInt(bitPattern: handle)   // a pointer is not Sendable; its address is
        let started = try thread.loop.invoke { meter_component_start(OpaquePointer(bitPattern: address)) }
        XCTAssertEqual(started, 0)
        XCTAssertEqual(meter_component_record(40), 0)
        XCTAssertEqual(meter_component_record(2), 0)
        meterInbox.withLock { $0?.close() }
        meterInbox.withLock { $0 = nil }
    }

    func testASwiftProgramHandsItsLoopToC() throws {
        // docs:begin capi-make-handle
        let thread = try Loop.startThread(name: "io")
        let handle = try thread.loop.makeCHandle()     // a uvloop_t * for the C library
        // What the C library does from its own threads: post, invoke, start timers.
        let status = uvloop_post(handle, { _ in print("on the loop's thread") }, nil)
        // ...
        uvloop_release(handle)                          // once no C code uses it any more
        thread.shutdown()                           // the loop is Swift's to shut down
        // docs:end
        XCTAssertEqual(status, 0)
    }
}
