import CLibUV

/// A `uv_loop_t`, either created here (owned) or handed over by C code (attached).
///
/// `@unchecked Sendable` is safe because the pointer is immutable and every libuv call through it
/// is made on the loop's thread; the `Loop` checks the thread before calling in.
struct NativeLoop: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<uv_loop_t>
    let isOwned: Bool

    /// Creates and initialises a loop that this process owns.
    static func create() throws(LoopError) -> NativeLoop {
        let pointer = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let status = uv_loop_init(pointer)
        guard status == 0 else {
            // libuv 1.44 leaves its epoll descriptor open when a later step of uv_loop_init (the
            // loop's signal pipe) fails; later libuv closes it. uv_loop_init sets the field to -1
            // before creating the descriptor, so a positive value is the one it leaked.
            if pointer.pointee.backend_fd > 0 { shim_close_fd(pointer.pointee.backend_fd) }
            pointer.deallocate()
            throw LoopError.libuv(status, "uv_loop_init")
        }
        return NativeLoop(pointer: pointer, isOwned: true)
    }

    /// Wraps a loop that C code owns and runs.
    static func attach(_ pointer: UnsafeMutablePointer<uv_loop_t>) -> NativeLoop {
        NativeLoop(pointer: pointer, isOwned: false)
    }

    /// Runs until `uv_stop` or until no active referenced handle is left.
    func runUntilStopped() { _ = uv_run(pointer, UV_RUN_DEFAULT) }

    /// Runs one iteration without blocking in poll.
    func runNoWait() { _ = uv_run(pointer, UV_RUN_NOWAIT) }

    /// Runs one iteration, waiting in the poll for I/O if nothing is ready.
    func runOnceWaiting() { _ = uv_run(pointer, UV_RUN_ONCE) }

    func stop() { uv_stop(pointer) }

    /// Lets pending close callbacks run, then closes and frees an owned loop.
    /// Returns libuv's status for `uv_loop_close` (0, or `UV_EBUSY` if a foreign handle remains).
    func closeOwned() -> Int32 {
        misusePrecondition(isOwned, "UVLoop: only an owned loop can be closed by UVLoop")
        // Closing handles finish in the next iteration's closing phase.
        _ = uv_run(pointer, UV_RUN_NOWAIT)
        var status = uv_loop_close(pointer)
        if status == UV_EBUSY.rawValue {
            _ = uv_run(pointer, UV_RUN_DEFAULT)
            status = uv_loop_close(pointer)
        }
        if status == 0 { pointer.deallocate() }
        return status
    }
}

/// The monotonic clock libuv uses, in nanoseconds: `CLOCK_MONOTONIC`, the clock behind
/// `uv_hrtime()`, read directly (one call less on every timer schedule).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}
