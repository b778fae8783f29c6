// The raw C libuv peers (Sources/CPeers): each workload runs entirely in C; Swift only times the call
// where the C function does not time itself.
import CPeers
import CMallocCount

enum CSide {
    static func postCrossThread(n: Int, producers: Int) -> SessionMaker {
        return {
            let q = cp_mq_start()!
            return Session(run: {
                let ns = cp_mq_post_cross_thread(q, n, Int32(producers))
                return Sample(value: ns / Double(n), ops: n)
            }, close: { cp_mq_stop(q) })
        }
    }

    static func lockFreeCrossThread(n: Int, producers: Int) -> SessionMaker {
        return {
            let q = cp_lf_start()!
            return Session(run: {
                let ns = cp_lf_post_cross_thread(q, n, Int32(producers))
                return Sample(value: ns / Double(n), ops: n)
            }, close: { cp_lf_stop(q) })
        }
    }

    static func postOnLoop(n: Int, batch: Int) -> SessionMaker {
        return {
            let q = cp_mq_start()!
            return Session(run: {
                Sample(value: cp_mq_post_on_loop(q, n, Int32(batch)) / Double(n), ops: n)
            }, close: { cp_mq_stop(q) })
        }
    }

    static func postNextIteration(n: Int, batch: Int) -> SessionMaker {
        return {
            let q = cp_mq_start()!
            return Session(run: {
                Sample(value: cp_mq_post_next_iteration(q, n, Int32(batch)) / Double(n), ops: n)
            }, close: { cp_mq_stop(q) })
        }
    }

    /// invoke_roundtrip's floor (`CPeers/cpeers_invoke.c`): an eventfd polled by a `uv_poll_t`,
    /// posts in nodes on the caller's stack, a wake-pending flag, a futex per caller. With
    /// `spinNanoseconds` > 0 the caller busy-waits that long before it sleeps (`libuv_c_spin`).
    static func invokeRoundtrip(n: Int, spinNanoseconds: Int = 0) -> SessionMaker {
        return {
            let l = cp_inv_start()!
            return Session(run: {
                Sample(value: cp_inv_roundtrip(l, n, spinNanoseconds) / Double(n), ops: n)
            }, close: { cp_inv_stop(l) })
        }
    }

    static func timerCancel(n: Int) -> SessionMaker {
        return { Session(run: { Sample(value: cp_timer_cancel(n) / Double(n), ops: n) }) }
    }

    static func timerReschedule(n: Int, rounds: Int) -> SessionMaker {
        return {
            let m = cp_moves_new(n)!
            return Session(run: {
                Sample(value: cp_moves_run(m, rounds) / Double(n * rounds), ops: n * rounds)
            }, close: { cp_moves_destroy(m) })
        }
    }

    static func timerFire(n: Int) -> SessionMaker {
        return {
            Session(run: { Sample(value: cp_timer_fire(n, 10) / Double(n), ops: n) })
        }
    }

    static func timerMemory(n: Int) -> SessionMaker {
        return {
            let t = cp_timers_new(n)!
            return Session(run: {
                let heap = measureHeap { cp_timers_fill(t, n) }
                return Sample(value: Double(heap.netBytes) / Double(n), ops: n,
                              allocsPerOp: Double(heap.allocations) / Double(n))
            }, close: { cp_timers_destroy(t) })
        }
    }

    static func idle() -> SessionMaker {
        return {
            let q = cp_mq_start()!
            _ = cp_mq_invoke_roundtrip(q, 1) // the loop thread is up and parked in epoll_wait
            return Session(run: { idleSample() }, close: { cp_mq_stop(q) })
        }
    }

    static func operations(n: Int) -> SessionMaker {
        return { Session(run: { Sample(value: cp_queue_work(n) / Double(n), ops: n) }) }
    }

    static func chunkedOverhead(n: Int, budgetNs: UInt64) -> SessionMaker {
        return {
            Session(run: {
                var sink: UInt64 = 0
                let ns = cp_chunked(n, budgetNs, 0, nil, &sink)
                blackHole(sink)
                return Sample(value: ns / Double(n), ops: n)
            })
        }
    }

    static func chunkedTimerLateness(n: Int, budgetNs: UInt64, periodNs: UInt64) -> SessionMaker {
        return {
            Session(run: {
                var sink: UInt64 = 0
                var p99 = 0.0
                _ = cp_chunked(n, budgetNs, periodNs, &p99, &sink)
                blackHole(sink)
                return Sample(value: p99, ops: n)
            })
        }
    }
}

/// The plain `for` loop that chunked_overhead is measured against.
enum PlainLoop {
    static func chunkedOverhead(n: Int) -> SessionMaker {
        return {
            Session(run: {
                let t0 = nowNs()
                var sink: UInt64 = 0
                for i in 0..<n { sink &+= cp_body(UInt64(i)) }
                let t1 = nowNs()
                blackHole(sink)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            })
        }
    }
}

/// One second of idling: CPU time used by the whole process (ns) while the main thread sleeps.
func idleSample() -> Sample {
    let cpu0 = processCPUNs()
    let t0 = nowNs()
    sleepNs(1_000_000_000)
    let cpu1 = processCPUNs()
    let t1 = nowNs()
    let seconds = Double(t1 - t0) / 1e9
    return Sample(value: Double(cpu1 - cpu0) / seconds, ops: 1)
}
