import XCTest
@testable import UVLoop
import UVTestSupport

/// Chunked loops on a loop thread: awaited from async code, and started and cancelled by other
/// loops' threads.
final class ChunkedLoopsAcrossThreadsTests: XCTestCase {
    func testAwaitingTheCompletion() async throws {
        let thread = try Loop.startThread(name: "chunked-async")
        let sum = Counter()
        let processed = try await thread.loop.startChunkedLoop(count: 1000) { index in
            sum.increment(by: index)
        }.completion.get()
        XCTAssertEqual(processed, 1000)
        XCTAssertEqual(sum.value, 999 * 1000 / 2)
        thread.shutdown()
    }

    func testStartAndCancelFromOtherThreads() throws {
        let target = try Loop.startThread(name: "chunked-target")
        let producers = try (0..<2).map { try Loop.startThread(name: "producer-\($0)") }
        let perProducer = 12
        let total = perProducer * producers.count
        let counters = (0..<total).map { _ in Counter() }
        // NativeMutex, not Synchronization.Mutex: ThreadSanitizer cannot see the latter's contended hand-offs.
        let completions = NativeMutex<[Int: ChunkedLoopCompletion]>([:])
        let cancelledByCall = NativeMutex<Set<Int>>([])
        let allDone = ThreadEvent()
        for (p, producer) in producers.enumerated() {
            try producer.loop.post {
                for k in 0..<perProducer {
                    let id = p * perProducer + k
                    let counter = counters[id]
                    let started = try? target.loop.startChunkedLoop(count: 5_000, budget: .items(500)) { _ in
                        counter.increment()
                    } completion: { completion in
                        let count = completions.withLock { $0[id] = completion; return $0.count }
                        if count == total { allDone.signal() }
                    }
                    guard let handle = started else { return XCTFail("start refused") }
                    if k % 2 == 0, handle.cancel() { cancelledByCall.withLock { _ = $0.insert(id) } }
                }
            }
        }
        allDone.wait()
        for producer in producers { producer.shutdown() }
        target.shutdown()
        let results = completions.withLock { $0 }
        let cancelled = cancelledByCall.withLock { $0 }
        XCTAssertEqual(results.count, total)
        for (id, completion) in results {
            XCTAssertEqual(completion.processed, counters[id].value, "every body call is counted")
            if cancelled.contains(id) {
                guard case .cancelled = completion.reason else { return XCTFail("\(id): \(completion)") }
            } else {
                XCTAssertTrue(completion.isFinished, "\(id): \(completion)")
                XCTAssertEqual(completion.processed, 5_000)
            }
        }
    }
}
