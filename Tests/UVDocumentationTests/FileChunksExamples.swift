import CLibUV
import Foundation
import UVLoop
import UVTestSupport
import XCTest

/// The examples of reading in chunks (OpenFiles.md) and of many paths at once (FileSystem.md),
/// run for real.
final class FileChunksExamples: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-docs-chunks-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testReadChunksAsync() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let path = "\(directory)/video"
        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 / 7) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(content)))
        // docs:begin read-chunks
        let video = try await loop.fileSystem.open(path)
        var checksum = 0
        for try await chunk in try video.readChunks(chunkLength: 64 * 1024, readAhead: 8) {
            checksum = chunk.reduce(checksum) { ($0 &* 31) &+ Int($1) }  // in file order
        }
        try await video.close()
        // docs:end
        XCTAssertEqual(checksum, content.reduce(0) { ($0 &* 31) &+ Int($1) })
    }

    func testReadChunksOnTheLoop() throws {
        let path = "\(directory)/data"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 1, count: 200_000)))
        let loop = try Loop()
        var total = 0
        // docs:begin read-chunks-callback
        try loop.fileSystem.open(path) { opened in
            guard case .success(let file) = opened else { return }
            _ = try? file.readChunks(readAhead: 8) { result in
                switch result {
                case .success(let chunk?): total += chunk.bytes.count  // lent for this call
                case .success(nil), .failure: file.close()             // the end, or what ended it
                }
            }
        }
        // docs:end
        for _ in 0..<2_000_000 where total < 200_000 { try loop.runOnce() }
        loop.shutdown()
        XCTAssertEqual(total, 200_000)
    }

    func testStatusOfEach() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let fs = loop.fileSystem
        let paths = ["\(directory)/a", "\(directory)/gone", "\(directory)/b"]
        XCTAssertTrue(FileManager.default.createFile(atPath: paths[0], contents: Data("aa".utf8)))
        XCTAssertTrue(FileManager.default.createFile(atPath: paths[2], contents: Data("bbb".utf8)))
        var sizes: [String: UInt64] = [:]
        // docs:begin status-of-each
        let results = try await fs.status(ofEach: paths, concurrency: 16)
        for (path, result) in zip(paths, results) {
            switch result {
            case .success(let status): sizes[path] = status.size
            case .failure(let error): print(error)      // stat "/srv/app/gone" failed: ENOENT …
            }
        }
        // docs:end
        XCTAssertEqual(sizes, [paths[0]: 2, paths[2]: 3])
    }
}
