import Foundation
import UVLoop
import UVTestSupport
import XCTest

/// The examples of WatchingFiles.md, run for real.
final class FileWatchingExamples: XCTestCase {
    func testWatchAndPoll() throws {
        let directory = "/tmp/uvloop-docs-\(getpid())"
        mkdir(directory, 0o755)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = try Loop()
        let seen = Recorder<String>()
        // docs:begin watch-file
        let watch = try loop.watchFile(directory) { watch, result in
            switch result {
            case .success(let change): print(change)        // "renamed app.conf", "changed app.conf"
            case .failure(let error): print("watch ended: \(error)")
            }
        }
        // docs:end
        // docs:begin poll-file
        let polled = try loop.pollFile("\(directory)/app.conf", every: .seconds(1)) { _, result in
            guard case .success(let change) = result else { return }
            if change.previous?.size != change.current?.size { seen.append("size changed") }
        }
        // docs:end
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(directory)/app.conf", contents: Data()))
        try loop.runOnce()
        watch.cancel()
        polled.cancel()
        loop.shutdown()
    }

    func testChangesAsASequence() async throws {
        let directory = "/tmp/uvloop-docs-seq-\(getpid())"
        mkdir(directory, 0o755)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        // docs:begin file-changes
        let changes = try loop.fileChanges(directory)
        _ = FileManager.default.createFile(atPath: "\(directory)/app.conf", contents: Data("port=80".utf8))
        for try await change in changes where change.name == "app.conf" {
            print(change)                                      // renamed app.conf: it appeared
            break
        }
        // docs:end
        XCTAssertFalse(changes.watch.isActive, "the change came, and leaving the loop cancelled the watch")
    }

    func testWatchFromTheLoopThread() throws {
        let directory = "/tmp/uvloop-docs-isolated-\(getpid())"
        mkdir(directory, 0o755)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = try Loop()
        // docs:begin watch-file-isolated
        final class Config {                               // lives on the loop's thread
            var reloads = 0
        }
        let config = Config()
        let watch = try loop.assumeIsolated().watchFile(directory) { _, result in
            if case .success(let change) = result, change.name == "app.conf" { config.reloads += 1 }
        }
        // docs:end
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(directory)/app.conf", contents: Data()))
        while config.reloads == 0 { _ = try loop.runOnce() }
        watch.cancel()
        loop.shutdown()
    }
}
