import Foundation
import UVLoop
import UVTestSupport
import XCTest

/// The examples of OpenFiles.md, run for real.
final class OpenFilesExamples: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-docs-files-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testOpenWriteReadClose() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let path = "\(directory)/journal"
        // docs:begin open-file
        let journal = try await loop.fileSystem.open(path, .readWrite, options: [.create, .append])
        try await journal.write(Array("started\n".utf8))
        try await journal.dataSync()                           // on the disk before we go on
        let firstLine = try await journal.read(upTo: 8, at: 0)  // "started\n"
        try await journal.close()
        // docs:end
        XCTAssertEqual(firstLine, Array("started\n".utf8))
    }

    func testReadIntoABuffer() throws {
        let path = "\(directory)/data"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 1, count: 200_000)))
        let loop = try Loop()
        var total = 0
        // docs:begin read-into-buffer
        try loop.fileSystem.open(path) { opened in
            guard case .success(let file) = opened else { return }
            let buffer = try! FileBuffer(capacity: 64 * 1024)
            var offset: Int64 = 0
            var readNext: ((Result<Int, LoopError>) -> Void)!
            readNext = { result in
                guard case .success(let count) = result, count > 0 else {
                    readNext = nil                                // ends the closure's hold on itself
                    return file.close()
                }
                total += buffer.bytes.count                      // the bytes, lent until the next read
                offset += Int64(count)
                try? file.read(into: buffer, at: offset, readNext)
            }
            try? file.read(into: buffer, at: 0, readNext)
        }
        // docs:end
        while total < 200_000 { try loop.runOnce() }
        loop.shutdown()
        XCTAssertEqual(total, 200_000)
    }

    func testWholeFiles() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let path = "\(directory)/settings.json"
        let updated = Array("{\"port\": 8080}".utf8)
        // docs:begin whole-files
        try await loop.fileSystem.writeFile(at: path, contents: updated, permissions: 0o600)
        let settings = try await loop.fileSystem.readFile(at: path, limit: 1 << 20)
        // docs:end
        XCTAssertEqual(settings, updated)
    }

    func testServeAFile() async throws {
        let thread = try Loop.startThread(name: "docs")
        defer { thread.shutdown() }
        let loop = thread.loop
        let path = "\(directory)/index.html"
        try await loop.fileSystem.writeFile(at: path, contents: Array("<h1>hello</h1>".utf8))
        let listener = try await loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
        let client = try await loop.connect(to: listener.localAddress)
        var connections = listener.connections.makeAsyncIterator()
        let connection = try await connections.next()!
        // docs:begin send-file
        let page = try await loop.fileSystem.open(path)
        let size = try await page.status().size
        try await connection.write(Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8))
        try await connection.sendFile(page)                     // from the page cache to the socket
        try await page.close()
        // docs:end
        // docs:begin write-contents
        let log = try await loop.fileSystem.open(path)
        try await connection.write(contentsOf: log, from: 0, count: 4)  // read and written in chunks
        try await log.close()
        // docs:end
        try await connection.shutdownWrites()
        var received: [UInt8] = []
        for try await chunk in client.reads { received += chunk }
        XCTAssertTrue(String(decoding: received, as: UTF8.self).hasSuffix("\r\n\r\n<h1>hello</h1><h1>"))
    }
}
