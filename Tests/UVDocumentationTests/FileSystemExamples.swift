import CLibUV
import Foundation
import UVLoop
import UVTestSupport
import XCTest

/// The examples of FileSystem.md, run for real.
final class FileSystemExamples: XCTestCase {
    func testTheCallbackFace() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let base = try makeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let done = Recorder<String>()
        // docs:begin fs-callback-face
        try loop.fileSystem.makeDirectory(at: "\(base)/cache", permissions: 0o750) { result in
            switch result {
            case .success: print("made")
            case .failure(let error): print(error)        // mkdir "/srv/app/cache" failed: EEXIST …
            }
        }
        // docs:end
        // The directory is made on a pool thread; look for it once it is there.
        for _ in 0..<2_000_000 where access("\(base)/cache", F_OK) != 0 { try loop.runOnce() }
        try loop.fileSystem.exists("\(base)/cache") { done.append("\($0)") }
        for _ in 0..<2_000_000 where done.values.isEmpty { try loop.runOnce() }
        XCTAssertEqual(done.values, ["success(true)"])
    }

    func testTheAsyncFaceAndErrors() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let base = try makeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        // docs:begin fs-async-face
        let fs = loop.fileSystem
        try await fs.makeDirectory(at: "\(base)/data/2026/11", withIntermediateDirectories: true)
        do {
            try await fs.rename("\(base)/data/missing", to: "\(base)/data/old")
        } catch {
            print(error)   // rename "…/data/missing -> …/data/old" failed: ENOENT (no such file or directory); …
        }
        // docs:end
        let status = try await fs.status(of: "\(base)/data/2026/11")
        XCTAssertEqual(status.type, .directory)
    }

    func testListing() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let base = try makeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        _ = FileManager.default.createFile(atPath: "\(base)/app.conf", contents: Data())
        mkdir("\(base)/logs", 0o755)
        var seen: [String] = []
        // docs:begin fs-list
        for entry in try await loop.fileSystem.listDirectory(at: base) {
            print(entry)                                     // app.conf (regular file), logs (directory)
        }
        // docs:end
        // docs:begin fs-entries
        var files = 0
        for try await entry in try loop.fileSystem.directoryEntries(at: base, batchSize: 1024) where entry.type == .regular {
            files += 1                                       // one batch of 1,024 entries held at a time
        }
        // docs:end
        for entry in try await loop.fileSystem.listDirectory(at: base) { seen.append(entry.description) }
        XCTAssertEqual(seen, ["app.conf (regular file)", "logs (directory)"])
        XCTAssertEqual(files, 1)
    }

    func testLinksCopiesTreesAndTemporaryDirectories() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let fs = loop.fileSystem
        let base = try makeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir("\(base)/releases", 0o755)
        mkdir("\(base)/releases/v2", 0o755)
        _ = FileManager.default.createFile(atPath: "\(base)/releases/v2/app", contents: Data("v2".utf8))
        // docs:begin fs-links
        try await fs.makeSymbolicLink(at: "\(base)/current.new", to: "releases/v2")
        try await fs.rename("\(base)/current.new", to: "\(base)/current")   // replaces the old link at once
        print(try await fs.symbolicLinkTarget(at: "\(base)/current"))      // releases/v2
        print(try await fs.realPath(of: "\(base)/current/app"))           // /srv/app/releases/v2/app
        // docs:end
        // docs:begin fs-copy
        try await fs.copyFile("\(base)/releases/v2/app", to: "\(base)/app.backup", options: [.exclusive, .cloneIfPossible])
        let copied = try await fs.copyTree("\(base)/releases/v2", to: "\(base)/releases/v3")
        let removed = try await fs.removeTree(at: "\(base)/releases/v3")       // copied == removed == 2
        // docs:end
        XCTAssertEqual(copied, 2)
        XCTAssertEqual(removed, 2)
        // docs:begin fs-temporary
        let scratch = try await fs.makeTemporaryDirectory(prefix: "report-")  // "$TMPDIR/report-a1B2c3", mode 0700
        // … write the report's parts in it …
        try await fs.removeTree(at: scratch)
        // docs:end
        let exists = try await fs.exists(scratch)
        XCTAssertFalse(exists)
        // docs:begin fs-attributes
        try await fs.setPermissions(0o640, at: "\(base)/app.backup")
        try await fs.setTimes(at: "\(base)/app.backup", accessed: .seconds(1_700_000_000), modified: .seconds(1_700_000_000))
        if try await fs.exists("\(base)/app.backup") {
            try await fs.checkAccess(to: "\(base)/app.backup", for: [.read, .write])
        }
        // docs:end
        let status = try await fs.status(of: "\(base)/app.backup")
        XCTAssertEqual(status.permissions, 0o640)
        XCTAssertEqual(status.modified, .seconds(1_700_000_000))
    }

    func testCancellation() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let base = try makeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir("\(base)/cache", 0o755)
        let path = "\(base)/cache"
        // docs:begin fs-cancel
        let cleanup = Task { try await loop.fileSystem.removeTree(at: path) }
        cleanup.cancel()   // stops after the requests in flight: LoopError.cancelled, or the count if it had finished
        // docs:end
        _ = try? await cleanup.value
    }

    private func makeBase() throws -> String {
        let base = "/tmp/uvloop-docs-fs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(base, 0o755), 0)
        return base
    }
}
