import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// The loop-thread forms of the file watches (`loop.assumeIsolated()`): handlers that keep
/// loop-thread state without a lock.
final class IsolatedFileWatchTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-isolated-watch-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testWatchAndPollHandlersKeepLoopThreadState() throws {
        let loop = try Loop()
        var names: [String] = []    // loop-thread state: not Sendable, no lock
        var appeared = false
        let isolated = loop.assumeIsolated()
        let watch = try isolated.watchFile(directory) { _, result in
            if case .success(let change) = result, let name = change.name { names.append(name) }
        }
        let polled = try isolated.pollFile("\(directory)/polled.txt", every: .milliseconds(5)) { _, result in
            if case .success(let change) = result, change.current != nil { appeared = true }
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(directory)/polled.txt", contents: Data("x".utf8)))
        loop.turn(until: { names.contains("polled.txt") })
        loop.turn(until: { appeared })
        XCTAssertTrue(watch.cancel())
        XCTAssertTrue(polled.cancel())
        XCTAssertTrue(loop.engine.ioHandles.isEmpty)
        loop.shutdown()
    }

    func testTheirErrorsAreTheLoopsOwn() throws {
        let loop = try Loop()
        XCTAssertThrowsError(try loop.assumeIsolated().watchFile("\(directory)/missing") { _, _ in }) { error in
            guard case .invalidArgument = error as? LoopError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try loop.assumeIsolated().pollFile(directory, every: .microseconds(1)) { _, _ in }) { error in
            guard case .invalidArgument = error as? LoopError else { return XCTFail("\(error)") }
        }
        loop.shutdown()
        XCTAssertThrowsError(try loop.assumeIsolated().watchFile(directory) { _, _ in }) { error in
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }
}
