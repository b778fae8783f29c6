// Dispatch peers: a serial DispatchQueue stands for the loop.
import Dispatch

enum DispatchSide {
    static func queue() -> DispatchQueue { DispatchQueue(label: "bench.serial") }

    static func postCrossThread(n: Int, producers: Int) -> SessionMaker {
        return {
            let q = queue()
            return Session(run: {
                let per = n / producers
                let c = Counter(target: per * producers)
                let t0 = nowNs()
                let threads = (0..<producers).map { _ in
                    BenchThread { for i in 0..<per { q.async { c.add(i) } } }
                }
                c.wait()
                let t1 = nowNs()
                threads.forEach { $0.join() }
                return Sample(value: Double(t1 - t0) / Double(per * producers), ops: per * producers)
            })
        }
    }

    static func postOnLoop(n: Int, batch: Int) -> SessionMaker {
        return {
            let q = queue()
            return Session(run: {
                let d = OnLoopDriver(n: n, batch: batch)
                @Sendable func drive() { d.step({ q.async(execute: $0) }, again: { q.async { drive() } }) }
                let t0 = nowNs()
                q.async { drive() }
                d.counter.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            })
        }
    }

    static func invokeRoundtrip(n: Int) -> SessionMaker {
        return {
            let q = queue()
            return Session(run: {
                var acc = 0
                let t0 = nowNs()
                for i in 0..<n { acc &+= q.sync { i &+ 1 } }
                let t1 = nowNs()
                blackHole(acc)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            })
        }
    }

    static func makeTimer(_ q: DispatchQueue, ms: Int64) -> DispatchSourceTimer {
        let s = DispatchSource.makeTimerSource(queue: q)
        s.schedule(deadline: .now() + .milliseconds(Int(ms)))
        s.setEventHandler {}
        s.activate()
        return s
    }

    static func timerCancel(n: Int) -> SessionMaker {
        return {
            let q = queue()
            return Session(run: {
                let ns = q.sync { () -> UInt64 in
                    var seq = TimeoutSequence()
                    var handles: [DispatchSourceTimer] = []
                    handles.reserveCapacity(n)
                    let t0 = nowNs()
                    for _ in 0..<n { handles.append(makeTimer(q, ms: seq.nextMilliseconds())) }
                    for h in handles { h.cancel() }
                    return nowNs() - t0
                }
                return Sample(value: Double(ns) / Double(n), ops: n)
            })
        }
    }

    /// timer_reschedule: `schedule(deadline:)` again on the active timer source moves it.
    static func timerReschedule(n: Int, rounds: Int) -> SessionMaker {
        return {
            let q = queue()
            let handles = Box<[DispatchSourceTimer]>([])
            let seq = Box(TimeoutSequence())
            q.sync {
                handles.value.reserveCapacity(n)
                for _ in 0..<n { handles.value.append(makeTimer(q, ms: seq.value.nextMilliseconds())) }
            }
            return Session(run: {
                let ns = q.sync { () -> UInt64 in
                    var s = seq.value
                    let t0 = nowNs()
                    for _ in 0..<rounds {
                        for h in handles.value { h.schedule(deadline: .now() + .milliseconds(Int(s.nextMilliseconds()))) }
                    }
                    let t1 = nowNs()
                    seq.value = s
                    return t1 - t0
                }
                return Sample(value: Double(ns) / Double(n * rounds), ops: n * rounds)
            }, close: {
                q.sync {
                    for h in handles.value { h.cancel() }
                    handles.value = []
                }
            })
        }
    }

    static func timerFire(n: Int) -> SessionMaker {
        return {
            let q = queue()
            return Session(run: {
                let c = Counter(target: n)
                let t0 = nowNs()
                q.async {
                    let base = DispatchTime.now()
                    for i in 0..<n {
                        let at = base + .nanoseconds(Int(Int64(i) * timerSpreadNs / Int64(n)))
                        q.asyncAfter(deadline: at) { c.add(i) }
                    }
                }
                c.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            })
        }
    }

    static func timerMemory(n: Int) -> SessionMaker {
        return {
            let q = queue()
            let handles = Box<[DispatchSourceTimer]>([])
            return Session(run: {
                let heap = q.sync { () -> (netBytes: Int64, allocations: UInt64) in
                    var seq = TimeoutSequence()
                    handles.value.reserveCapacity(n)
                    return measureHeap {
                        for _ in 0..<n { handles.value.append(makeTimer(q, ms: seq.nextMilliseconds())) }
                    }
                }
                return Sample(value: Double(heap.netBytes) / Double(n), ops: n,
                              allocsPerOp: Double(heap.allocations) / Double(n))
            }, close: {
                q.sync {
                    for h in handles.value { h.cancel() }
                    handles.value = []
                }
            })
        }
    }

    static func idle() -> SessionMaker {
        return {
            let q = queue()
            q.sync {}
            return Session(run: { idleSample() })
        }
    }

    static func operations(n: Int) -> SessionMaker {
        return {
            let q = queue()
            return Session(run: {
                let c = Counter(target: n)
                let g = DispatchGroup()
                let t0 = nowNs()
                for i in 0..<n {
                    DispatchQueue.global().async(group: g) {
                        let v = i &* 2 &+ 1
                        q.async(group: g) { c.add(v) }
                    }
                }
                g.wait()
                let t1 = nowNs()
                precondition(c.count == n)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            })
        }
    }

    actor DefaultActor {
        var count = 0
        func hop() -> Int { count += 1; return count }
    }

    /// A default actor: the global concurrent executor, Dispatch-backed on Linux.
    static func actorHop(n: Int) -> SessionMaker {
        return {
            let a = DefaultActor()
            return Session(run: { Sample(value: hopLoop(n: n) { await a.hop() }, ops: n) })
        }
    }
}
