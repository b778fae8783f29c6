import XCTest
@testable import UVLoop
import UVTestSupport

final class JobRingTests: XCTestCase {
    /// Jobs come out in queuing order across wrap-around and growth, and a drain takes only what
    /// was queued before its snapshot.
    func testOrderAcrossWrapAndGrowthAndSnapshotBoundary() {
        let ran = Recorder<Int>()
        var ring = JobRing(capacity: 4)
        func run(_ job: consuming Job) {
            if case .run(let work) = consume job { work() } else { XCTFail("not a closure job") }
        }
        for value in 0..<3 { ring.append(.run { ran.append(value) }) }
        ring.markSnapshot()
        run(ring.takeFromSnapshot())
        run(ring.takeFromSnapshot())
        // Wrap around, then grow past the capacity while one snapshot job is still queued.
        for value in 3..<10 { ring.append(.run { ran.append(value) }) }
        XCTAssertTrue(ring.hasSnapshotJobs)
        run(ring.takeFromSnapshot())
        XCTAssertFalse(ring.hasSnapshotJobs, "jobs queued after the snapshot wait for the next one")
        XCTAssertFalse(ring.isEmpty)
        ring.markSnapshot()
        while ring.hasSnapshotJobs { run(ring.takeFromSnapshot()) }
        XCTAssertTrue(ring.isEmpty)
        XCTAssertEqual(ran.values, Array(0..<10))
    }

    /// A ring that goes away with jobs still queued releases what their closures captured.
    func testAFreedRingReleasesItsQueuedClosures() {
        weak var captured: Recorder<Int>?
        do {
            let ring = UnsafeMutablePointer<JobRing>.allocate(capacity: 1)
            ring.initialize(to: JobRing(capacity: 2))
            let recorder = Recorder<Int>()
            captured = recorder
            for _ in 0..<3 { ring.pointee.append(.run { recorder.append(1) }) }
            ring.deinitialize(count: 1)
            ring.deallocate()
        }
        XCTAssertNil(captured)
    }
}
