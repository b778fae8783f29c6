import UVLoop
import XCTest

// docs:begin loop-actor
actor RequestCounter {
    let loop: Loop                             // the actor keeps its loop alive
    private var count = 0
    init(loop: Loop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }
    func record(_ source: String) -> Int { count += 1; return count }
}
// docs:end

// docs:begin main-loop-actor
@MainLoopActor final class Session {
    var requests = 0
    func handle() { requests += 1 }            // always on the main loop's thread
}
// docs:end

/// The examples of Concurrency.md, run for real.
final class ConcurrencyExamples: XCTestCase {
    func testALoopActor() async throws {
        let thread = try Loop.startThread(name: "counter")
        // docs:begin loop-actor-use
        let loop = thread.loop
        let hits = LoopBound(0, loop: loop)        // the closure API: loop-confined state
        let counter = RequestCounter(loop: loop)   // the actor API: an actor pinned to the loop

        try loop.post { hits.value += 1 }          // runs first: it was queued first
        let count = await counter.record("a task") // hops onto the loop's thread, then back
        let inside = try await loop.invoke {       // work on the loop can enter the actor synchronously
            counter.assumeIsolated { $0.record("a closure") }
        }
        // docs:end
        XCTAssertEqual(count, 1)
        XCTAssertEqual(inside, 2)
        let hitCount = try await loop.invoke { hits.value }
        XCTAssertEqual(hitCount, 1)
        thread.shutdown()
    }

    func testAsyncFaces() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        // docs:begin async-faces
        let answer = try await loop.invoke { 21 * 2 }           // hop onto the loop, run, come back
        let onLoop = await Task(executorPreference: loop) {     // nonisolated async code on the loop
            loop.isOnLoopThread
        }.value
        // docs:end
        XCTAssertEqual(answer, 42)
        XCTAssertTrue(onLoop)
        thread.shutdown()
    }

    func testTheMainLoopActor() async throws {
        // docs:begin main-loop-actor-use
        let session = Session()
        await session.handle()                                  // from any thread: hop and back
        try MainLoop.shared.post {
            MainLoopActor.assumeIsolated { session.handle() }   // posted work is on that thread already
        }
        // docs:end
        let requests = await session.requests
        XCTAssertEqual(requests, 2, "the post was queued before this hop")
    }
}
