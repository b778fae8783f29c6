import CLibUV
import CUVLoop
import Synchronization
import UVLoop
import UVLoopC

/// What a C program that owns its `uv_loop_t` gets: the C API of uvloop.h (called here from
/// Swift exactly as C calls it), posts from another thread with nothing of the owner's alive,
/// UVLoop's handles told apart in a `uv_walk`, and a detach after which `uv_loop_close` is 0.
func runEmbeddingSection() throws {
    print("== Embedding in a C program's loop (uvloop.h: attach, post, timers, keep-alive, detach)")
    let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    defer { cLoop.deallocate() }
    uv_loop_init(cLoop)

    var handle: OpaquePointer?
    print("  uvloop_attach: \(uvloop_attach(cLoop, &handle)); a second attach: \(String(cString: uvloop_strerror(uvloop_attach(cLoop, &handle))))")
    guard let l = handle else { return }

    // Nothing of the owner's is alive, so the owner keeps its loop running for UVLoop's work.
    print("  uvloop_keep_alive(l, 1): \(uvloop_keep_alive(l, 1))")
    handleAddress.store(UInt(bitPattern: l), ordering: .relaxed)
    // A C worker thread: 100,000 events as (function, context) pairs; no allocation per post.
    let worker = try NativeThread.start {
        let l = OpaquePointer(bitPattern: handleAddress.load(ordering: .relaxed))
        for _ in 0..<100_000 {
            _ = uvloop_post(l, { _ in eventsReceived.add(1, ordering: .relaxed) }, nil)
        }
        // After the last event, a callback that lets the owner's uv_run return.
        _ = uvloop_post(l, { _ in
            _ = uvloop_keep_alive(OpaquePointer(bitPattern: handleAddress.load(ordering: .relaxed)), 0)
        }, nil)
    }
    var timer: OpaquePointer?
    _ = uvloop_timer_start(l, 2_000_000_000, 0, { _ in timerRuns.add(1, ordering: .relaxed) }, nil, &timer)
    _ = uvloop_timer_again(timer, 1_000_000)   // moved from 2 s to 1 ms
    uv_run(cLoop, UV_RUN_DEFAULT)
    worker.join()
    uvloop_timer_release(timer)
    print("  the owner's uv_run(DEFAULT) ran \(eventsReceived.load(ordering: .relaxed)) events posted by a C thread,"
        + " and the timer moved to 1 ms ran \(timerRuns.load(ordering: .relaxed)) time")

    // Forgetting to detach: every handle a uv_walk finds is UVLoop's.
    print("  before detach, uv_loop_close: \(String(cString: uv_err_name(uv_loop_close(cLoop)))); handles UVLoop owns: \(ownedHandles(cLoop))")
    print("  uvloop_detach: \(uvloop_detach(l)); a post after it: \(String(cString: uvloop_strerror(uvloop_post(l, { _ in }, nil))))")
    uv_run(cLoop, UV_RUN_NOWAIT)
    print("  uvloop_release: \(uvloop_release(l)); UVLoop handles left: \(ownedHandles(cLoop)); uv_loop_close: \(uv_loop_close(cLoop))")
    print()
}

// What the C callbacks above count into: they are C function pointers, which capture nothing.
private let eventsReceived = Atomic<Int>(0)
private let timerRuns = Atomic<Int>(0)
private let handleAddress = Atomic<UInt>(0)
private let walkedOwnHandles = Atomic<Int>(0)

/// The handles of UVLoop's that a `uv_walk` over `cLoop` finds.
private func ownedHandles(_ cLoop: UnsafeMutablePointer<uv_loop_t>) -> Int {
    walkedOwnHandles.store(0, ordering: .relaxed)
    uv_walk(cLoop, { handle, _ in
        if uvloop_owns_handle(handle) == 1 { walkedOwnHandles.add(1, ordering: .relaxed) }
    }, nil)
    return walkedOwnHandles.load(ordering: .relaxed)
}
