import Foundation
import UVTestSupport
import XCTest

@testable import UVLoop

/// a reader paused while its reads are in flight, at the loop's ending.
final class FileChunkReaderEndingTests: XCTestCase {
    func testAReaderPausedWithReadsInFlightEndsAtTheLoopsEnding() throws {
        let scratch = ScratchDirectory()
        let path = scratch["data"]
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 100_000)))
        let loop = try Loop()
        var opened: Result<LoopFile, LoopError>?
        try loop.fileSystem.open(path) { opened = $0 }
        loop.turn(until: { opened != nil })
        let file = try opened!.get()
        var calls = 0
        // Four reads start at once; pausing right away leaves them in flight.
        let reader = try file.readChunks(chunkLength: 1000, readAhead: 4) { _ in calls += 1 }
        reader.pause()
        weak let core = Mirror(reflecting: reader).children.first { $0.label == "core" }?.value as AnyObject?
        XCTAssertNotNil(core)
        loop.shutdown()
        XCTAssertEqual(calls, 0)
        XCTAssertFalse(reader.isReading, "the loop's ending ends a paused reader (LoopFile.readChunks' docs)")
        _ = reader
        // The reader is the only holder of the core now; the core must not keep itself alive.
        withExtendedLifetime(reader) {}
    }

    func testAPausedReadersCoreIsReleasedAfterTheLoopsEnding() throws {
        let scratch = ScratchDirectory()
        let path = scratch["data"]
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 100_000)))
        let loop = try Loop()
        var opened: Result<LoopFile, LoopError>?
        try loop.fileSystem.open(path) { opened = $0 }
        loop.turn(until: { opened != nil })
        let file = try opened!.get()
        weak var core: AnyObject?
        do {
            let reader = try file.readChunks(chunkLength: 1000, readAhead: 4) { _ in }
            reader.pause()
            core = Mirror(reflecting: reader).children.first { $0.label == "core" }?.value as AnyObject?
            XCTAssertNotNil(core)
        }
        loop.shutdown()
        XCTAssertNil(core, "a reader whose reads came back after the loop ended is leaked (a cycle through its completions)")
    }
}
