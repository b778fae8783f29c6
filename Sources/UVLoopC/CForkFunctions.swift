import CUVLoop
import UVLoop

// The loop in a child process after fork(2); declared and documented in uvloop.h.

/// The C function `uvloop_after_fork`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_after_fork(_ l: OpaquePointer?) -> Int32 {
    guard let l else { return UVLOOP_EINVAL }
    // Unmanaged: C's reference keeps the CLoop alive for the call. Not `cLoop(_:)`, whose check
    // stops a child that has not reset the loop: this is the call that resets it.
    let loop = Unmanaged<CLoop>.fromOpaque(UnsafeRawPointer(l)).takeUnretainedValue().loop
    // C gets an error code where Swift's afterFork() stops the program (libuv's convention).
    guard loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    return cResult { () throws(LoopError) in try loop.afterFork() }
}

/// The C name of the `@c` function `function` (`#function` gives "uvloop_post(_:_:_:)"), for
/// messages.
func cFunctionName(_ function: StaticString) -> String {
    String(describing: function).prefix { $0 != "(" }.description
}
