import CLibUV
import Dispatch
import Synchronization
import UVLoop

func libuvVersion() -> String { String(cString: uv_version_string()) }

/// Posting from several threads, invoke, next-iteration ordering and LoopBound, on a loop that
/// runs on a thread of its own.
func runPostingSection() throws {
    print("== Running work on the loop's thread (post, invoke, next iteration, LoopBound)")
    let thread = try Loop.startThread(name: "demo-loop")
    let loop = thread.loop

    // Loop-confined state: a plain struct, only ever touched on the loop's thread.
    struct Tally { var perProducer = [Int](repeating: 0, count: 4); var inOrder = true; var last = [Int](repeating: -1, count: 4) }
    let tally = LoopBound(Tally(), loop: loop)

    // 1. post from four threads at once: FIFO per producer, every closure runs once.
    let producers = DispatchGroup()
    for producer in 0..<4 {
        DispatchQueue.global().async(group: producers) {
            for i in 0..<50_000 {
                try! tally.post { t in
                    if t.last[producer] != i - 1 { t.inOrder = false }
                    t.last[producer] = i
                    t.perProducer[producer] += 1
                }
            }
        }
    }
    producers.wait()
    // 2. invoke: posted after every producer finished, so it sees all their work; it waits.
    let result = try tally.invoke { $0 }
    print("  4 threads posted 50,000 closures each; the loop ran \(result.perProducer) (in per-producer order: \(result.inOrder))")

    // 3. invoke from the loop's own thread runs inline, so it cannot deadlock.
    let nested = try loop.invoke { try loop.invoke { "inline on the loop thread: \(loop.isOnLoopThread)" } }
    print("  invoke inside invoke: \(nested)")

    // 3b. two loops whose threads would wait for each other: the invoke closing the cycle throws.
    let other = try Loop.startThread(name: "demo-other")
    let cycle = try loop.invoke {
        try other.loop.invoke { () -> String in
            do throws(LoopError) {
                _ = try loop.invoke { 0 }
                return "it ran (unexpected)"
            } catch {
                return "\(error)"
            }
        }
    }
    other.shutdown()
    print("  loop A's thread waits in B.invoke while B's work invokes back on A: \(cycle)")

    // 4. next iteration runs after the loop polled for I/O, after this turn's posted work.
    let order = LoopBound([String](), loop: loop)
    let done = DispatchSemaphore(value: 0)
    try loop.post {
        try? order.postNextIteration { $0.append("next-iteration"); done.signal() }
        try? order.post { $0.append("post") }
        order.value.append("running job")
    }
    done.wait()
    print("  queued from a job as next-iteration, then post: ran as \(try order.invoke { $0 }.joined(separator: " -> "))")

    // 5. the zero-allocation path: an inbox of values, lock-free, drained by one receiver.
    let inboxTotal = LoopBound((sum: 0, count: 0), loop: loop)
    let allReceived = DispatchSemaphore(value: 0)
    let inbox = try loop.makeInbox(of: Int.self, capacity: 1024) { value in
        inboxTotal.value.sum += value
        inboxTotal.value.count += 1
        if inboxTotal.value.count == 200_000 { allReceived.signal() }
    }
    let senders = DispatchGroup()
    for _ in 0..<2 {
        DispatchQueue.global().async(group: senders) {
            for value in 1...100_000 { try! inbox.send(value) } // waits for room when the ring is full
        }
    }
    senders.wait()
    inbox.close() // later sends throw; what was sent is still delivered
    allReceived.wait()
    let inboxSum = try inboxTotal.invoke { $0.sum }
    print("  2 threads sent 100,000 values each through a 1,024-slot inbox; the receiver summed \(inboxSum) (expected \(2 * 5_000_050_000))")

    // 6. shutdown is graceful: work posted before it runs; work posted after is refused, visibly.
    let ranBeforeShutdown = Atomic<Int>(0)
    for _ in 0..<1000 { try loop.post { ranBeforeShutdown.add(1, ordering: .relaxed) } }
    thread.shutdown()
    do {
        try loop.post {}
    } catch {
        print("  after shutdown: \(ranBeforeShutdown.load(ordering: .relaxed)) of 1000 late posts ran; a new post throws: \(error)")
    }
    print()
}

