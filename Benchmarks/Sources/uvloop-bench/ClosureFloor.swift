// The floor of `post_on_loop` in Swift (impl `swift_floor`): the same driver and the same closures
// (`{ c.add(v) }`, made by the driver, handed over `consuming`, run once and released), queued in
// a plain array on one thread and run in batches, with no loop, no thread check and no wake-up.
// What a post costs beyond this is the loop's; what this costs (the closure's context: an
// allocation, a retain of what it captures, and its release after it ran) every Swift runtime pays.

enum ClosureFloor {
    /// One thread: the driver posts a batch into `pending`, and re-posts itself after it; each
    /// round swaps the batch out and runs it, as a loop's drain would.
    static func postOnLoop(n: Int, batch: Int) -> SessionMaker {
        return {
            Session(run: {
                let d = OnLoopDriver(n: n, batch: batch)
                let queue = FloorQueue()
                let t0 = nowNs()
                let thread = BenchThread {
                    @Sendable func drive() {
                        d.step({ work in queue.post(consume work) }, again: { queue.post { drive() } })
                    }
                    queue.post { drive() }
                    queue.runUntilEmpty()
                }
                d.counter.wait()
                let t1 = nowNs()
                thread.join()
                return Sample(value: Double(t1 - t0) / Double(n), ops: n)
            })
        }
    }
}

/// The floor's queue: a ring of closures behind a pointer (as stored `var`s of a class, every
/// append and take would pay a run-time exclusivity check), touched by its one thread only.
final class FloorQueue: @unchecked Sendable {
    /// A closure in a struct: an array or buffer of bare closures would hold them at the generic
    /// abstraction, and converting each one to it allocates a thunk.
    struct Work {
        let run: @Sendable () -> Void
    }

    private struct Ring {
        var storage: UnsafeMutablePointer<Work>
        var mask: Int
        var head = 0
        var tail = 0
    }

    private let ring: UnsafeMutablePointer<Ring>

    init(capacity: Int = 4096) {
        ring = .allocate(capacity: 1)
        ring.initialize(to: Ring(storage: .allocate(capacity: capacity), mask: capacity - 1))
    }

    deinit {
        ring.pointee.storage.deallocate()
        ring.deallocate()
    }

    /// Room for the driver's batches (1,000 and itself) without growing.
    @inline(__always)
    func post(_ work: consuming @escaping @Sendable () -> Void) {
        precondition(ring.pointee.tail &- ring.pointee.head <= ring.pointee.mask, "FloorQueue is full")
        (ring.pointee.storage + (ring.pointee.tail & ring.pointee.mask)).initialize(to: Work(run: work))
        ring.pointee.tail &+= 1
    }

    /// Runs what is queued, in order, batch after batch (each up to the tail it started with),
    /// until nothing is left.
    func runUntilEmpty() {
        while ring.pointee.head != ring.pointee.tail {
            let end = ring.pointee.tail
            while ring.pointee.head != end {
                let work = (ring.pointee.storage + (ring.pointee.head & ring.pointee.mask)).move()
                ring.pointee.head &+= 1
                work.run()
            }
        }
    }
}
