@testable import UVLoop
import XCTest

/// What the simulated network's seam costs a real stream.
final class StreamSimulationSeamTests: XCTestCase {
    func testAStreamHandleStaysAPlainValue() {
        // No reference counting when a core reads its handle: the simulated stream is held by the
        // handle's context, not by the struct.
        XCTAssertTrue(_isPOD(StreamHandle.self))
    }

    func testARealLoopOpensRealStreams() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        XCTAssertFalse(loop.engine.ioHandles.isSimulated)
        XCTAssertNil(try loop.streamSimulation())
    }
}
