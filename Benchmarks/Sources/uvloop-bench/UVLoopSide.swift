// The UVLoop side of every workload. A workload whose UVLoop feature is not in the library yet has a
// `nil` maker here: adding it is one function (the peers already run).
import CPeers
import Dispatch
import UVLoop
import UVOperations

final class UVLoopRunner: @unchecked Sendable {
    let thread: LoopThread
    var loop: Loop { thread.loop }
    init() throws { thread = try Loop.startThread(name: "uvloop-bench") }
    func close() { thread.shutdown() }
}

enum UVLoopSide {
    static func postCrossThread(n: Int, producers: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let per = n / producers
                let c = Counter(target: per * producers)
                let t0 = nowNs()
                let threads = (0..<producers).map { _ in
                    BenchThread { for i in 0..<per { try! loop.post { c.add(i) } } }
                }
                c.wait()
                let t1 = nowNs()
                threads.forEach { $0.join() }
                return Sample(value: Double(t1 - t0) / Double(per * producers), ops: per * producers)
            }, close: r.close)
        }
    }

    /// The zero-allocation path: an inbox of Int delivered to one long-lived receiver.
    static func postCrossThreadNoAlloc(n: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let c = Counter(target: 0)
            // The same ring size as the C lock-free peer (LF_CAP), so both wait for room alike.
            let inbox = try r.loop.makeInbox(of: Int.self, capacity: 1 << 16) { v in c.add(v) }
            return Session(run: {
                c.reset(target: n)
                let t0 = nowNs()
                let producer = BenchThread { for i in 0..<n { try! inbox.send(i) } }
                c.wait()
                let t1 = nowNs()
                producer.join()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: {
                inbox.close()
                r.close()
            })
        }
    }

    static func postOnLoop(n: Int, batch: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let d = OnLoopDriver(n: n, batch: batch)
                @Sendable func drive() { d.step({ work in try! loop.post(consume work) }, again: { try! loop.post { drive() } }) }
                let t0 = nowNs()
                try loop.post { drive() }
                d.counter.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    static func postNextIteration(n: Int, batch: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let d = OnLoopDriver(n: n, batch: batch)
                @Sendable func drive() {
                    d.step({ work in try! loop.postNextIteration(consume work) }, again: { try! loop.postNextIteration { drive() } })
                }
                let t0 = nowNs()
                try loop.post { drive() }
                d.counter.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    static func loopBoundAppend(n: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let bound = LoopBound([Int](), loop: loop)
                let t0 = nowNs()
                let count = try loop.invoke {
                    for i in 0..<n { bound.value.append(i) }
                    return bound.value.count
                }
                let t1 = nowNs()
                blackHole(count)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    static func invokeRoundtrip(n: Int, busyPoll: Duration = .zero) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            try loop.setBusyPoll(busyPoll)
            return Session(run: {
                var acc = 0
                let t0 = nowNs()
                for i in 0..<n { acc &+= try loop.invoke { i &+ 1 } }
                let t1 = nowNs()
                blackHole(acc)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    static func timerCancel(n: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let ns = try loop.invoke { () -> UInt64 in
                    var seq = TimeoutSequence()
                    var handles: [LoopTimer] = []
                    handles.reserveCapacity(n)
                    let t0 = nowNs()
                    for _ in 0..<n { handles.append(try loop.schedule(after: .milliseconds(seq.nextMilliseconds())) {}) }
                    for h in handles { _ = h.cancel() }
                    return nowNs() - t0
                }
                return Sample(value: Double(ns) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    /// timer_reschedule: n pending timers, scheduled once per session; each run moves every one
    /// `rounds` times (`reschedule(after:)`) to the next timeout of the shared sequence.
    static func timerReschedule(n: Int, rounds: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            let handles = Box<[LoopTimer]>([])
            let seq = Box(TimeoutSequence())
            try loop.invoke {
                handles.value.reserveCapacity(n)
                for _ in 0..<n {
                    handles.value.append(try loop.schedule(after: .milliseconds(seq.value.nextMilliseconds())) {})
                }
            }
            return Session(run: {
                let ns = try loop.invoke { () -> UInt64 in
                    var s = seq.value
                    let hs = handles.value
                    var moved = 0
                    let t0 = nowNs()
                    for _ in 0..<rounds {
                        for h in hs {
                            if h.reschedule(after: .milliseconds(s.nextMilliseconds())) { moved += 1 }
                        }
                    }
                    let t1 = nowNs()
                    seq.value = s
                    precondition(moved == n * rounds, "a pending timer could not be moved")
                    return t1 - t0
                }
                return Sample(value: Double(ns) / Double(n * rounds), ops: n * rounds)
            }, close: {
                try? loop.invoke { for h in handles.value { _ = h.cancel() }; handles.value = [] }
                r.close()
            })
        }
    }

    static func timerFire(n: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let c = Counter(target: n)
                let t0 = nowNs()
                try loop.post {
                    for i in 0..<n {
                        try! loop.schedule(after: .nanoseconds(Int64(i) * timerSpreadNs / Int64(n))) { c.add(i) }
                    }
                }
                c.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    static func timerMemory(n: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            let handles = Box<[LoopTimer]>([])
            return Session(run: {
                let heap = try loop.invoke { () -> (netBytes: Int64, allocations: UInt64) in
                    var seq = TimeoutSequence()
                    handles.value.reserveCapacity(n)
                    return try measureHeap {
                        for _ in 0..<n {
                            handles.value.append(try loop.schedule(after: .milliseconds(seq.nextMilliseconds())) {})
                        }
                    }
                }
                return Sample(value: Double(heap.netBytes) / Double(n), ops: n,
                              allocsPerOp: Double(heap.allocations) / Double(n))
            }, close: {
                try? loop.invoke { for h in handles.value { _ = h.cancel() }; handles.value = [] }
                r.close()
            })
        }
    }

    static func idle() -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            try r.loop.invoke {}
            return Session(run: { idleSample() }, close: r.close)
        }
    }

    // MARK: Chunked loops, operations, the loop executor.

    /// chunked_overhead: a chunked loop over `n` items of `cp_body`, 2 ms budget; ns per item, from
    /// the start call to the completion.
    static func chunkedOverhead(n: Int, budgetNs: UInt64) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let sink = Sink()
                defer { sink.free() }
                let done = DispatchSemaphore(value: 0)
                let t0 = nowNs()
                try loop.startChunkedLoop(count: n, budget: .time(.nanoseconds(Int64(budgetNs))), body: { i in
                    sink.add(cp_body(UInt64(i)))
                }, completion: { _ in done.signal() })
                done.wait()
                let t1 = nowNs()
                blackHole(sink.value)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    /// chunked_timer_lateness: p99 lateness (ns) of a timer due every 5 ms (re-armed on each fire,
    /// lateness = fire time - deadline) while a chunked loop of `n` items runs with a 2 ms budget.
    static func chunkedTimerLateness(n: Int, budgetNs: UInt64, periodNs: UInt64) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                final class State: @unchecked Sendable { // loop thread only, until `done`
                    let sink = Sink()
                    var lateness: [Double] = []
                    var deadline: UInt64 = 0
                    var finished = false
                    var timer: LoopTimer?
                }
                let st = State()
                st.lateness.reserveCapacity(4096)
                let done = DispatchSemaphore(value: 0)
                @Sendable func arm() {
                    st.deadline = nowNs() + periodNs
                    st.timer = try? loop.schedule(after: .nanoseconds(Int64(periodNs))) {
                        st.lateness.append(Double(Int64(bitPattern: nowNs() &- st.deadline)))
                        if !st.finished { arm() }
                    }
                }
                try loop.invoke {
                    arm()
                    try loop.startChunkedLoop(count: n, budget: .time(.nanoseconds(Int64(budgetNs))), body: { i in
                        st.sink.add(cp_body(UInt64(i)))
                    }, completion: { _ in
                        st.finished = true
                        _ = st.timer?.cancel()
                        done.signal()
                    })
                }
                done.wait()
                let p99 = try loop.invoke { () -> Double in
                    blackHole(st.sink.value)
                    st.sink.free()
                    let sorted = st.lateness.sorted()
                    guard !sorted.isEmpty else { return 0 }
                    return sorted[Int((Double(sorted.count - 1) * 0.99).rounded())]
                }
                return Sample(value: p99, ops: n)
            }, close: r.close)
        }
    }

    /// operations: `n` trivial block operations (worker on the pool, completion on the loop), started
    /// on the loop thread; ns per operation until the last completion ran.
    static func operations(n: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let c = Counter(target: n)
                let t0 = nowNs()
                try loop.post {
                    for i in 0..<n {
                        _ = try! WorkerOperation { i &* 2 &+ 1 }
                            .onCompletion { c.add($0.value!) }
                            .start(on: loop, session: nil)
                    }
                }
                c.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }

    actor LoopActor {
        let loop: Loop
        var count = 0
        init(loop: Loop) { self.loop = loop }
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }
        func hop() -> Int { count += 1; return count }
    }

    /// actor_hop: from a task on the global executor, `n` awaits of a method of an actor whose
    /// executor is the loop (the NIO side does the same with `EventLoop.executor`).
    /// `actor_hop_busy_poll` runs the same with the loop's opt-in busy polling (`Loop.setBusyPoll`).
    static func actorHop(n: Int, busyPoll: Duration = .zero) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            try r.loop.setBusyPoll(busyPoll)
            let a = LoopActor(loop: r.loop)
            return Session(run: {
                Sample(value: hopLoop(n: n) { await a.hop() }, ops: n)
            }, close: r.close)
        }
    }
}
