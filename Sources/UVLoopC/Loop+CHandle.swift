import UVLoop

extension Loop {
    /// The loop behind a `uvloop_t *` that C code handed to Swift: how a Swift component of a C
    /// program reaches the loop the program attached (`uvloop_attach`). Callable from any thread.
    ///
    /// ```swift
    /// @c func stats_component_start(_ handle: OpaquePointer?) -> Int32 {
    ///     guard let loop = Loop.fromCHandle(handle) else { return UVLOOP_EINVAL }
    ///     do {
    ///         try loop.scheduleRepeating(every: .seconds(10)) { print("stats component: alive") }
    ///         return 0
    ///     } catch {
    ///         return error.cErrorCode
    ///     }
    /// }
    /// ```
    ///
    /// The handle stays C's: the returned `Loop` is valid as long as Swift holds it, but the
    /// `uvloop_t *` only until C releases it (`uvloop_release`).
    /// - Parameter handle: a `uvloop_t *` from `uvloop_attach` or ``makeCHandle()``, not yet
    ///   released.
    /// - Returns: the loop; nil for a null pointer.
    public static func fromCHandle(_ handle: OpaquePointer?) -> Loop? {
        cLoop(handle)?.loop
    }

    /// A `uvloop_t *` for this loop, for C code in a Swift program: C libraries then post to the
    /// loop, invoke on it and start timers on it from their own threads through uvloop.h.
    /// Callable from any thread; from another thread it waits until the loop's thread has set
    /// up the handle's inbox, so the loop must be running.
    ///
    /// The handle holds the loop: release it with `uvloop_release` once no C code uses it. Every
    /// handle on one loop shares one queue, so a C thread's calls stay in order whichever handle
    /// they go through. A handle made here cannot detach the loop: shut it down in Swift (C calls
    /// that need the loop then return `UVLOOP_ESHUTDOWN`).
    /// - Returns: a new `uvloop_t *`, retained until `uvloop_release`.
    /// - Throws: `LoopError.shutDown` (or `LoopError.detached`) when the loop no longer
    ///   accepts work.
    public func makeCHandle() throws(LoopError) -> OpaquePointer {
        retainedHandle(try CLoop.of(self))
    }
}
