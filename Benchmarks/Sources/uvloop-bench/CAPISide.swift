// UVLoop's C API (uvloop.h) driven from C (Sources/CAPIPeers): the c_* workloads. The loop is either
// made in Swift (`Loop.startThread`, a `uvloop_t *` from `makeCHandle()`) or a uv_loop_t that a C
// thread owns and runs, with UVLoop attached (`uvloop_attach`, keep-alive on).
import CAPIPeers
import UVLoop
import UVLoopC

enum CAPISide {
    /// c_post_cross_thread on a loop made in Swift: C pthreads call `uvloop_post`.
    static func postCrossThread(n: Int, producers: Int) -> SessionMaker {
        return {
            let r = try UVLoopRunner()
            let handle = try r.loop.makeCHandle()
            return Session(run: {
                let ns = cap_post_cross_thread(handle, n, Int32(producers))
                return Sample(value: ns / Double(n), ops: n)
            }, close: {
                cap_release(handle)
                r.close()
            })
        }
    }

    /// c_post_cross_thread on a C-owned uv_loop_t run by a C thread, UVLoop attached.
    static func postCrossThreadAttached(n: Int, producers: Int) -> SessionMaker {
        return {
            let a = cap_attached_start()!
            let handle = cap_attached_handle(a)!
            return Session(run: {
                let ns = cap_post_cross_thread(handle, n, Int32(producers))
                return Sample(value: ns / Double(n), ops: n)
            }, close: { cap_attached_stop(a) })
        }
    }

    /// c_timer_start_cancel: `uvloop_timer_start` + `uvloop_timer_cancel` + `uvloop_timer_release`
    /// from C, on the loop thread of a loop made in Swift (the C function runs inside `invoke`).
    static func timerStartCancel(n: Int) -> SessionMaker {
        return {
            let r = try UVLoopRunner()
            let handle = try r.loop.makeCHandle()
            nonisolated(unsafe) let h = handle
            return Session(run: {
                let ns = try r.loop.invoke { cap_timer_start_cancel(h, n) }
                guard ns >= 0 else { throw BenchError.failed("a uvloop_timer_* call failed") }
                return Sample(value: ns / Double(n), ops: n)
            }, close: {
                cap_release(handle)
                r.close()
            })
        }
    }
}
