import CUVLoop
import UVLoop

// Posting, next-iteration work and invoke from C; declared and documented in uvloop.h.

@c @implementation
func uvloop_post(_ l: OpaquePointer?, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let l, let fn else { return UVLOOP_EINVAL }
    // Unmanaged: C's reference keeps the CLoop alive for the call; borrowing it without a
    // retain keeps producer threads off its reference count, which they would otherwise all
    // write on every post.
    return Unmanaged<CLoop>.fromOpaque(UnsafeRawPointer(l))._withUnsafeGuaranteedRef { cLoop in
        cResult { () throws(LoopError) in try cLoop.post(CCallback(function: fn, context: ctx)) }
    }
}

@c @implementation
func uvloop_post_next_iteration(_ l: OpaquePointer?, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let cLoop = cLoop(l), let fn else { return UVLOOP_EINVAL }
    let callback = CCallback(function: fn, context: ctx)
    return cResult { () throws(LoopError) in try cLoop.loop.postNextIteration { callback.run() } }
}

@c @implementation
func uvloop_invoke(_ l: OpaquePointer?, _ fn: uvloop_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let cLoop = cLoop(l), let fn else { return UVLOOP_EINVAL }
    let callback = CCallback(function: fn, context: ctx)
    return cResult { () throws(LoopError) in try cLoop.loop.invoke { callback.run() } }
}
