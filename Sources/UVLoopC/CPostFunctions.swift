import CUVLoop
import UVLoop

// Posting, next-iteration work and invoke from C; declared and documented in uvloop.h.

/// The C function `uvloop_post`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_post(_ l: OpaquePointer?, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let l, let fn else { return UVLOOP_EINVAL }
    return withCLoop(l) { cLoop in
        cResult { () throws(LoopError) in try cLoop.post(CCallback(function: fn, context: ctx)) }
    }
}

/// The C function `uvloop_post_next_iteration`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_post_next_iteration(_ l: OpaquePointer?, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let cLoop = cLoop(l), let fn else { return UVLOOP_EINVAL }
    let callback = CCallback(function: fn, context: ctx)
    let loop = cLoop.loop
    guard !loop.isOnLoopThread else {
        return cResult { () throws(LoopError) in try loop.postNextIteration { callback.run() } }
    }
    return cResult { () throws(LoopError) in
        try cLoop.send {
            // Arriving in a detach's last delivery, when the next iteration will not come, it
            // runs now: a call that returned 0 runs.
            do throws(LoopError) { try loop.postNextIteration { callback.run() } } catch { callback.run() }
        }
    }
}

/// The C function `uvloop_invoke`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_invoke(_ l: OpaquePointer?, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let cLoop = cLoop(l), let fn else { return UVLOOP_EINVAL }
    let callback = CCallback(function: fn, context: ctx)
    let loop = cLoop.loop
    guard !loop.isOnLoopThread else {
        return cResult { () throws(LoopError) in try loop.invoke { callback.run() } }
    }
    return cResult { () throws(LoopError) in
        try loop.invokeFromAnotherThread("uvloop_invoke") { deliver throws(LoopError) in
            try cLoop.send {
                callback.run()
                deliver(())
            }
        }
    }
}
