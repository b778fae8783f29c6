// SwiftNIO 2.101 peers: a MultiThreadedEventLoopGroup with one thread, its EventLoop, scheduleTask,
// NIOThreadPool and its SerialExecutor.
import NIOCore
import NIOPosix
import Dispatch

final class NIOLoop: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    var el: EventLoop { group.next() }
    func close() { try? group.syncShutdownGracefully() }
}

/// A driver that, on the loop, posts a batch of items and then itself, until `n` items were posted.
final class OnLoopDriver: @unchecked Sendable {
    let counter: Counter
    let n: Int
    let batch: Int
    var issued = 0
    init(n: Int, batch: Int) { self.n = n; self.batch = batch; counter = Counter(target: n) }

    /// `post` posts one closure from the loop thread (the verb under test). It takes the closure
    /// `consuming`, as a call written `loop.post { ... }` hands over the closure it just formed:
    /// a borrowed one would cost each side that consumes it a copy (a retain and a release).
    @inline(__always) func step(_ post: (consuming @escaping @Sendable () -> Void) -> Void, again: () -> Void) {
        let k = min(batch, n - issued)
        let c = counter
        let base = issued
        for j in 0..<k {
            let v = base + j
            post { c.add(v) }
        }
        issued += k
        if issued < n { again() }
    }
}

enum NIOSide {
    static func postCrossThread(n: Int, producers: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            return Session(run: {
                let per = n / producers
                let c = Counter(target: per * producers)
                let t0 = nowNs()
                let threads = (0..<producers).map { _ in
                    BenchThread { for i in 0..<per { el.execute { c.add(i) } } }
                }
                c.wait()
                let t1 = nowNs()
                threads.forEach { $0.join() }
                return Sample(value: Double(t1 - t0) / Double(per * producers), ops: per * producers)
            }, close: l.close)
        }
    }

    static func postOnLoop(n: Int, batch: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            return Session(run: {
                let d = OnLoopDriver(n: n, batch: batch)
                @Sendable func drive() { d.step({ el.execute($0) }, again: { el.execute { drive() } }) }
                let t0 = nowNs()
                el.execute { drive() }
                d.counter.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: l.close)
        }
    }

    static func loopBoundAppend(n: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            return Session(run: {
                let t0 = nowNs()
                let count = try el.submit {
                    var bound = NIOLoopBound([Int](), eventLoop: el)
                    for i in 0..<n { bound.value.append(i) }
                    return bound.value.count
                }.wait()
                let t1 = nowNs()
                blackHole(count)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: l.close)
        }
    }

    static func invokeRoundtrip(n: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            return Session(run: {
                var acc = 0
                let t0 = nowNs()
                for i in 0..<n { acc &+= try el.submit { i &+ 1 }.wait() }
                let t1 = nowNs()
                blackHole(acc)
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: l.close)
        }
    }

    static func timerCancel(n: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            return Session(run: {
                let ns = try el.submit { () -> UInt64 in
                    var seq = TimeoutSequence()
                    var handles: [Scheduled<Void>] = []
                    handles.reserveCapacity(n)
                    let t0 = nowNs()
                    for _ in 0..<n { handles.append(el.scheduleTask(in: .milliseconds(seq.nextMilliseconds())) {}) }
                    for h in handles { h.cancel() }
                    return nowNs() - t0
                }.wait()
                return Sample(value: Double(ns) / Double(n), ops: n)
            }, close: l.close)
        }
    }

    /// timer_reschedule: NIO cannot move a scheduled task, so each move is `cancel()` and a new
    /// `scheduleTask` with the same closure.
    static func timerReschedule(n: Int, rounds: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            let handles = Box<[Scheduled<Void>]>([])
            let seq = Box(TimeoutSequence())
            try el.submit {
                handles.value.reserveCapacity(n)
                for _ in 0..<n { handles.value.append(el.scheduleTask(in: .milliseconds(seq.value.nextMilliseconds())) {}) }
            }.wait()
            return Session(run: {
                let ns = try el.submit { () -> UInt64 in
                    var s = seq.value
                    var hs = handles.value
                    handles.value = [] // hs is unique: replaced in place
                    let t0 = nowNs()
                    for _ in 0..<rounds {
                        for i in 0..<n {
                            hs[i].cancel()
                            hs[i] = el.scheduleTask(in: .milliseconds(s.nextMilliseconds())) {}
                        }
                    }
                    let t1 = nowNs()
                    seq.value = s
                    handles.value = hs
                    return t1 - t0
                }.wait()
                return Sample(value: Double(ns) / Double(n * rounds), ops: n * rounds)
            }, close: {
                try? el.submit { for h in handles.value { h.cancel() }; handles.value = [] }.wait()
                l.close()
            })
        }
    }

    static func timerFire(n: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            return Session(run: {
                let c = Counter(target: n)
                let t0 = nowNs()
                el.execute {
                    for i in 0..<n {
                        _ = el.scheduleTask(in: .nanoseconds(Int64(i) * timerSpreadNs / Int64(n))) { c.add(i) }
                    }
                }
                c.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: l.close)
        }
    }

    static func timerMemory(n: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            let handles = Box<[Scheduled<Void>]>([])
            return Session(run: {
                let heap = try el.submit { () -> (netBytes: Int64, allocations: UInt64) in
                    var seq = TimeoutSequence()
                    handles.value.reserveCapacity(n)
                    return measureHeap {
                        for _ in 0..<n {
                            handles.value.append(el.scheduleTask(in: .milliseconds(seq.nextMilliseconds())) {})
                        }
                    }
                }.wait()
                return Sample(value: Double(heap.netBytes) / Double(n), ops: n,
                              allocsPerOp: Double(heap.allocations) / Double(n))
            }, close: {
                handles.value = []
                l.close()
            })
        }
    }

    static func idle() -> SessionMaker {
        return {
            let l = NIOLoop()
            try l.el.submit {}.wait()
            return Session(run: { idleSample() }, close: l.close)
        }
    }

    static func operations(n: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            let pool = NIOThreadPool(numberOfThreads: 4)
            pool.start()
            return Session(run: {
                let c = Counter(target: n)
                let t0 = nowNs()
                el.execute {
                    for i in 0..<n {
                        pool.runIfActive(eventLoop: el) { i &* 2 &+ 1 }.whenSuccess { c.add($0) }
                    }
                }
                c.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            }, close: {
                try? pool.syncShutdownGracefully()
                l.close()
            })
        }
    }

    actor LoopActor {
        let el: EventLoop
        var count = 0
        init(el: EventLoop) { self.el = el }
        nonisolated var unownedExecutor: UnownedSerialExecutor { el.executor.asUnownedSerialExecutor() }
        func hop() -> Int { count += 1; return count }
    }

    static func actorHop(n: Int) -> SessionMaker {
        return {
            let l = NIOLoop()
            let a = LoopActor(el: l.el)
            return Session(run: {
                Sample(value: hopLoop(n: n) { await a.hop() }, ops: n)
            }, close: l.close)
        }
    }
}

/// From a task on the global executor, `n` awaits of `hop` (onto the actor and back); ns per hop.
func hopLoop(n: Int, _ hop: @escaping @Sendable () async -> Int) -> Double {
    let result = Box<UInt64>(0)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        var acc = 0
        _ = await hop() // first hop: executor and task warmed up
        let t0 = nowNs()
        for _ in 0..<n { acc &+= await hop() }
        result.value = nowNs() - t0
        blackHole(acc)
        done.signal()
    }
    done.wait()
    return Double(result.value) / Double(n)
}
