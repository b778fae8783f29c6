import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

final class FileWatchTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-watch-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func write(_ text: String, to name: String) {
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: Data(text.utf8)))
    }

    func testADirectoryReportsCreationChangeRenameAndDeletionOfItsEntries() throws {
        let loop = try Loop()
        let changes = Recorder<FileChange>()
        let watch = try loop.watchFile(directory) { _, result in
            if case .success(let change) = result { changes.append(change) }
        }
        write("one", to: "a.txt")
        loop.turn(until: { changes.values.contains { $0.name == "a.txt" && $0.renamed } })
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: "\(directory)/a.txt"))
        handle.seekToEndOfFile()
        handle.write(Data("two".utf8))
        handle.closeFile()
        loop.turn(until: { changes.values.contains { $0.name == "a.txt" && $0.changed } })
        XCTAssertEqual(rename("\(directory)/a.txt", "\(directory)/b.txt"), 0)
        loop.turn(until: { changes.values.contains { $0.name == "b.txt" && $0.renamed } })
        XCTAssertEqual(unlink("\(directory)/b.txt"), 0)
        loop.turn(until: { changes.values.filter { $0.name == "b.txt" && $0.renamed }.count >= 2 })
        XCTAssertTrue(watch.isActive, "the directory itself is still there")
        XCTAssertTrue(watch.cancel())
        XCTAssertFalse(watch.cancel(), "idempotent")
        XCTAssertTrue(loop.engine.ioHandles.isEmpty)
        loop.shutdown()
    }

    func testAWatchedFileThatIsDeletedEndsTheWatch() throws {
        let loop = try Loop()
        write("x", to: "gone.txt")
        let changes = Recorder<FileChange>()
        let watch = try loop.watchFile("\(directory)/gone.txt") { _, result in
            if case .success(let change) = result { changes.append(change) }
        }
        XCTAssertEqual(unlink("\(directory)/gone.txt"), 0)
        loop.turn(until: { !watch.isActive })
        XCTAssertTrue(changes.values.contains { $0.renamed }, "the deletion was reported before the end")
        XCTAssertTrue(loop.engine.ioHandles.isEmpty)
        loop.shutdown()
    }

    func testAPathThatDoesNotExistIsAClearError() throws {
        let loop = try Loop()
        XCTAssertThrowsError(try loop.watchFile("\(directory)/missing") { _, _ in }) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("\(directory)/missing") && message.contains("watch its directory"), message)
        }
        XCTAssertTrue(loop.engine.ioHandles.isEmpty)
        loop.shutdown()
    }

    func testPollingReportsAppearanceChangeAndDisappearance() throws {
        let loop = try Loop()
        let changes = Recorder<FileStatusChange>()
        let path = "\(directory)/polled.txt"
        let watch = try loop.pollFile(path, every: .milliseconds(5)) { _, result in
            if case .success(let change) = result { changes.append(change) }
        }
        // The first look finds no file, and says so once; only then does the file appear (a file
        // already there at the first look is its starting point, not a change).
        loop.turn(until: { changes.values.contains { $0.previous == nil && $0.current == nil } })
        write("12345", to: "polled.txt")
        loop.turn(until: { changes.values.contains { $0.previous == nil && $0.current?.size == 5 } })
        write("1234567", to: "polled.txt")
        loop.turn(until: { changes.values.contains { $0.current?.size == 7 } })
        XCTAssertEqual(unlink(path), 0)
        loop.turn(until: { changes.values.contains { $0.previous != nil && $0.current == nil } })
        XCTAssertTrue(watch.isActive, "a polled path may come back")
        watch.cancel()
        XCTAssertThrowsError(try loop.pollFile(path, every: .microseconds(10)) { _, _ in }) { error in
            guard case .invalidArgument = error as? LoopError else { return XCTFail("\(error)") }
        }
        loop.shutdown()
    }

    func testTheAsyncFaceEndsWithTheWatch() async throws {
        let thread = try Loop.startThread(name: "watch")
        defer { thread.shutdown() }
        let changes = try thread.loop.fileChanges(directory)
        write("hello", to: "c.txt")
        var seen: [FileChange] = []
        for try await change in changes {
            seen.append(change)
            if change.name == "c.txt" { break }
        }
        XCTAssertTrue(seen.contains { $0.name == "c.txt" })
        XCTAssertFalse(changes.watch.isActive, "leaving the loop cancelled the watch")
    }

    func testShutdownAndDetachCloseWatches() throws {
        let owned = try Loop()
        let watch = try owned.watchFile(directory) { _, _ in }
        let polled = try owned.pollFile(directory, every: .seconds(1)) { _, _ in }
        owned.shutdown()
        XCTAssertFalse(watch.isActive)
        XCTAssertFalse(polled.isActive)

        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let attached = try Loop.attach(cLoop)
        let second = try attached.watchFile(directory) { _, _ in }
        attached.detach()
        XCTAssertFalse(second.isActive)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }
}
