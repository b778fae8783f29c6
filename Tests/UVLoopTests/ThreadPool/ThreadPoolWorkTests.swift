import XCTest
@testable import UVLoop
import UVTestSupport

/// The core's thread-pool primitive, driven directly through `Loop.queueWork`.
final class ThreadPoolWorkTests: XCTestCase {
    /// A job that records where each part ran and can be held on its pool thread.
    final class RecordingJob: ThreadPoolJob {
        let loop: Loop
        let hold: Gate?
        let started = Gate()
        let finished = Gate()
        private let record = NativeMutex(Record())

        struct Record {
            var work: ThreadPoolWork?
            var ranOnLoopThread: Bool?
            var finishedCancelled: Bool?
            var finishedOnLoopThread: Bool?
            var finishCount = 0
        }

        init(loop: Loop, hold: Gate? = nil, accept: Bool = true) {
            self.loop = loop
            self.hold = hold
            self.accept = accept
        }

        let accept: Bool

        var snapshot: Record { record.withLock { $0 } }

        func willQueue(_ work: ThreadPoolWork) -> Bool {
            record.withLock { $0.work = work }
            return accept
        }

        func runOnThreadPool(_ work: ThreadPoolWork) {
            let onLoop = loop.isOnLoopThread
            record.withLock { $0.ranOnLoopThread = onLoop }
            started.open()
            hold?.pass()
        }

        func finishOnLoop(_ work: ThreadPoolWork, cancelled: Bool) {
            let onLoop = loop.isOnLoopThread
            record.withLock {
                $0.finishedCancelled = cancelled
                $0.finishedOnLoopThread = onLoop
                $0.finishCount += 1
            }
            finished.open()
        }

        /// `uv_cancel`, on the loop's thread.
        func cancel() throws -> Bool {
            try loop.invoke { self.snapshot.work!.cancel() }
        }
    }

    func testJobRunsOnAPoolThreadAndFinishesOnTheLoopThread() throws {
        let thread = try Loop.startThread(name: "pool-test")
        defer { thread.shutdown() }
        let job = RecordingJob(loop: thread.loop)
        try thread.loop.queueWork(job)
        job.finished.pass()
        let record = job.snapshot
        XCTAssertEqual(record.ranOnLoopThread, false)
        XCTAssertEqual(record.finishedOnLoopThread, true)
        XCTAssertEqual(record.finishedCancelled, false)
        XCTAssertEqual(record.finishCount, 1)
        XCTAssertEqual(try thread.loop.invoke { thread.loop.threadPoolJobsInFlight }, 0)
    }

    /// With every pool thread held, a queued job can be withdrawn: it never runs and finishes
    /// cancelled; a running one cannot.
    func testCancelWithdrawsAQueuedJobButNotARunningOne() throws {
        let thread = try Loop.startThread(name: "pool-test")
        defer { thread.shutdown() }
        let loop = thread.loop
        let hold = Gate()
        let running = (0..<threadPoolSize).map { _ in RecordingJob(loop: loop, hold: hold) }
        for job in running { try loop.queueWork(job) }
        for job in running { job.started.pass() }
        let queued = RecordingJob(loop: loop)
        try loop.queueWork(queued)
        XCTAssertEqual(try loop.invoke { loop.threadPoolJobsInFlight }, running.count + 1)

        XCTAssertTrue(try queued.cancel())
        queued.finished.pass()
        XCTAssertEqual(queued.snapshot.finishedCancelled, true)
        XCTAssertNil(queued.snapshot.ranOnLoopThread, "withdrawn before a pool thread took it")
        XCTAssertFalse(try running[0].cancel(), "a running job cannot be withdrawn")

        hold.open(running.count)
        for job in running {
            job.finished.pass()
            XCTAssertEqual(job.snapshot.finishedCancelled, false)
            XCTAssertEqual(job.snapshot.finishCount, 1)
        }
        XCTAssertEqual(try loop.invoke { loop.threadPoolJobsInFlight }, 0)
    }

    func testAJobThatDeclinesIsFinishedCancelledWithoutRunning() throws {
        let thread = try Loop.startThread(name: "pool-test")
        defer { thread.shutdown() }
        let job = RecordingJob(loop: thread.loop, accept: false)
        try thread.loop.queueWork(job)
        job.finished.pass()
        XCTAssertEqual(job.snapshot.finishedCancelled, true)
        XCTAssertNil(job.snapshot.ranOnLoopThread)
    }

    func testQueueingOnAShutDownLoopThrows() throws {
        let loop = try Loop.manual()
        loop.shutdown()
        XCTAssertThrowsError(try loop.queueWork(RecordingJob(loop: loop))) { error in
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
        let thread = try Loop.startThread(name: "pool-test")
        thread.shutdown()
        XCTAssertThrowsError(try thread.loop.queueWork(RecordingJob(loop: thread.loop))) { error in
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }

    /// Slots are recycled: many more jobs than the pool keeps all finish exactly once.
    func testManyJobsFinishExactlyOnce() throws {
        let thread = try Loop.startThread(name: "pool-test")
        defer { thread.shutdown() }
        let jobs = (0..<3000).map { _ in RecordingJob(loop: thread.loop) }
        for job in jobs { try thread.loop.queueWork(job) }
        for job in jobs { job.finished.pass() }
        XCTAssertTrue(jobs.allSatisfy { $0.snapshot.finishCount == 1 && $0.snapshot.finishedCancelled == false })
    }

    /// A job that leaves a value in its result space on the pool thread and takes it back on the
    /// loop thread.
    final class ResultJob: ThreadPoolJob {
        let input: Int
        let finished = Gate()
        private let taken = NativeMutex<[Int]?>(nil)

        init(input: Int) { self.input = input }

        var result: [Int]? { taken.withLock { $0 } }

        func willQueue(_ work: ThreadPoolWork) -> Bool { true }

        func runOnThreadPool(_ work: ThreadPoolWork) {
            // An array: a reference-counted result, which must arrive with its reference intact.
            work.storeResult(Array(repeating: input, count: 3))
        }

        func finishOnLoop(_ work: ThreadPoolWork, cancelled: Bool) {
            let result = cancelled ? nil : work.takeResult([Int].self)
            taken.withLock { $0 = result }
            finished.open()
        }
    }

    func testAResultStoredOnThePoolThreadIsTakenOnTheLoopThread() throws {
        let thread = try Loop.startThread(name: "pool-test")
        defer { thread.shutdown() }
        let jobs = (0..<100).map { ResultJob(input: $0) }
        for job in jobs { try thread.loop.queueWork(job) }
        for job in jobs {
            job.finished.pass()
            XCTAssertEqual(job.result, [job.input, job.input, job.input])
        }
        XCTAssertTrue(ThreadPoolWork.canHoldResult(Result<(Int, Int, Int), any Error>.self))
        XCTAssertFalse(ThreadPoolWork.canHoldResult((Int, Int, Int, Int, Int).self))
    }

    /// Each chunk holds as many slots as all before it, up to the largest; the chunks kept after a
    /// burst hold exactly the slots kept.
    func testChunksDoubleTheSlotsUpToTheLargestAndTheKeptOnesHoldTheKeptSlots() {
        let sizes = (0..<12).map { ThreadPoolQueue.slots(inChunk: $0) }
        XCTAssertEqual(sizes, [64, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 8192, 8192, 8192])
        let kept = (0..<ThreadPoolQueue.retainedChunks).map { ThreadPoolQueue.slots(inChunk: $0) }
        XCTAssertEqual(kept.reduce(0, +), ThreadPoolQueue.retainedSlots)
    }

    /// A burst beyond the slots the queue keeps takes more chunks; once the last job has finished,
    /// the extra chunks are freed, and the slots kept still serve later jobs.
    func testABurstsExtraSlotsAreFreedWhenItIsOver() throws {
        let thread = try Loop.startThread(name: "pool-test")
        defer { thread.shutdown() }
        let loop = thread.loop
        let retained = ThreadPoolQueue.retainedSlots
        let hold = Gate()
        let jobs = (0..<(retained + 2 * ThreadPoolQueue.slotsPerChunk)).map { _ in RecordingJob(loop: loop, hold: hold) }
        // Queued in one loop callback, so that one drain hands them all to the pool: with the pool
        // held, all are in flight when the post queued after them (by the same thread) runs.
        let counts = Recorder<(inFlight: Int, slots: Int)>()
        let counted = Gate()
        try loop.invoke {
            for job in jobs { try loop.queueWork(job) }
            try loop.post {
                counts.append((loop.threadPoolJobsInFlight, loop.threadPoolSlotCount))
                counted.open()
            }
        }
        counted.pass()
        XCTAssertEqual(counts.values.first?.inFlight, jobs.count)
        XCTAssertGreaterThan(counts.values.first?.slots ?? 0, retained)
        hold.open(jobs.count)
        for job in jobs { job.finished.pass() }
        XCTAssertEqual(try loop.invoke { loop.threadPoolSlotCount }, retained)

        let after = RecordingJob(loop: loop)
        try loop.queueWork(after)
        after.finished.pass()
        XCTAssertEqual(after.snapshot.finishCount, 1)
        XCTAssertEqual(try loop.invoke { loop.threadPoolSlotCount }, retained)
        XCTAssertTrue(jobs.allSatisfy { $0.snapshot.finishCount == 1 })
    }
}
