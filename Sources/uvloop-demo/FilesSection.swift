import Glibc
import UVLoop

/// Open files: open, write and read at an offset and in sequence, a read into a reused buffer,
/// a file read in chunks with reads in flight, an atomic replacement, a file too large for its limit, and a file served into a connection
/// with sendfile.
func runFilesSection() throws {
    print("\n== Open files")
    let loop = try Loop()
    let failure = LoopBound<(any Error)?>(nil, loop: loop)
    Task(executorPreference: loop) {
        do { try await showFiles(on: loop) } catch { failure.value = error }
        loop.stop()
    }
    try loop.run()
    loop.shutdown()
    if let error = failure.value { throw error }
}

private func showFiles(on loop: Loop) async throws {
    let directory = "/tmp/uvloop-demo-files-\(getpid())"
    _ = mkdir(directory, 0o755)
    defer {
        for name in ["journal", "large", "settings.json", "page.html"] { unlink("\(directory)/\(name)") }
        rmdir(directory)
    }

    print("1. Open with create and append, write, fsync, read back at an offset:")
    let journal = try await loop.fileSystem.open("\(directory)/journal", .readWrite, options: [.create, .append])
    try await journal.write(Array("first line\n".utf8))
    try await journal.write(Array("second line\n".utf8))
    try await journal.dataSync()
    let tail = try await journal.read(upTo: 11, at: 11)
    print("  bytes 11..<22: \(String(decoding: tail, as: UTF8.self).debugDescription); size \(try await journal.status().size)")

    print("2. Read into a reused buffer on the loop's thread (no allocation per read):")
    let total: Int = try await withCheckedThrowingContinuation { continuation in
        do {
            try loop.post {
                let buffer = try! FileBuffer(capacity: 8)
                var total = 0
                var readNext: ((Result<Int, LoopError>) -> Void)!
                readNext = { result in
                    switch result {
                    case .success(0):
                        readNext = nil
                        continuation.resume(returning: total)
                    case .success(let count):
                        total += count
                        do { try journal.read(into: buffer, at: Int64(total), readNext) } catch {
                            readNext = nil
                            continuation.resume(throwing: error)
                        }
                    case .failure(let error):
                        readNext = nil
                        continuation.resume(throwing: error)
                    }
                }
                do { try journal.read(into: buffer, at: 0, readNext) } catch { continuation.resume(throwing: error) }
            }
        } catch {
            continuation.resume(throwing: error)
        }
    }
    print("  read \(total) bytes, 8 at a time, into one FileBuffer")
    try await journal.close()

    print("3. Read a larger file in chunks, eight reads in flight, in file order:")
    let large = "\(directory)/large"
    try await loop.fileSystem.writeFile(at: large, contents: (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0) })
    let reader = try await loop.fileSystem.open(large)
    var chunkCount = 0
    var byteCount = 0
    for try await chunk in try reader.readChunks(chunkLength: 64 * 1024, readAhead: 8) {
        chunkCount += 1
        byteCount += chunk.count
    }
    try await reader.close()
    print("  \(byteCount) bytes in \(chunkCount) chunks of at most 64 KiB")

    print("4. Replace a file atomically (temporary file, fsync, rename, fsync of the directory):")
    let settings = "\(directory)/settings.json"
    try await loop.fileSystem.writeFile(at: settings, contents: Array("{\"port\": 80}".utf8))
    try await loop.fileSystem.writeFile(at: settings, contents: Array("{\"port\": 8080}".utf8), permissions: 0o600)
    let contents = try await loop.fileSystem.readFile(at: settings)
    print("  now \(String(decoding: contents, as: UTF8.self)), mode 0o\(String(try await loop.fileSystem.status(of: settings).permissions, radix: 8))")

    print("5. A file over readFile's limit is refused:")
    do {
        _ = try await loop.fileSystem.readFile(at: settings, limit: 4)
    } catch {
        print("  \(error)")
    }

    print("6. Serve a file into a connection with sendfile, after a header:")
    let page = "\(directory)/page.html"
    try await loop.fileSystem.writeFile(at: page, contents: Array("<h1>served by sendfile</h1>\n".utf8))
    let listener = try await loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
    let client = try await loop.connect(to: listener.localAddress)
    var connections = listener.connections.makeAsyncIterator()
    guard let server = try await connections.next() else { return }
    let file = try await loop.fileSystem.open(page)
    try await server.write(Array("HEADER\n".utf8))
    let sent = try await server.sendFile(file)
    try await server.shutdownWrites()
    try await file.close()
    var received: [UInt8] = []
    for try await chunk in client.reads { received += chunk }
    print("  sent \(sent) bytes of the file; the peer read \(String(decoding: received, as: UTF8.self).debugDescription)")
    client.close()
    server.close()
    listener.close()
}
