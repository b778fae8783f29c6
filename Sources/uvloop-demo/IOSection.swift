import Glibc
import UVLoop

/// A TCP echo server (callbacks on the loop's thread) and a client (async), a Unix-domain socket,
/// a write to a peer that does not read (backpressure), a descriptor watch, a name lookup, a
/// signal watch, and a graceful shutdown on SIGTERM, all on one real loop run by this thread.
func runIOSection() throws {
    print("== I/O: streams, backpressure, descriptors, name resolution, signals")
    let loop = try Loop()
    Task(executorPreference: loop) {
        do {
            try await narrateIO(loop: loop)
        } catch {
            print("  the section failed: \(error)")
            loop.shutdown()
        }
    }
    try loop.run()
    print("  run() returned: SIGTERM shut the loop down, every listener and connection closed.")
}

/// Starts an echo server on `address` with the callback face: each connection's reads are
/// written straight back from the loop's read buffer, without a copy.
private func startEchoServer(on loop: Loop, at address: SocketAddress) throws(LoopError) -> StreamListener {
    try loop.listen(on: address) { accepted in
        guard case .success(let connection) = accepted else { return }
        try? connection.startReading { connection, read in
            switch read {
            case .bytes(let bytes): try? connection.write(bytes)
            case .end, .failed: connection.close()
            }
        }
    }
}

/// Reads from `connection` until `count` bytes have arrived.
private func read(_ count: Int, from connection: StreamConnection) async throws -> [UInt8] {
    var received: [UInt8] = []
    for try await chunk in connection.reads {
        received += chunk
        if received.count >= count { break }
    }
    return received
}

private func narrateIO(loop: Loop) async throws {
    print("1. A TCP echo server with read callbacks, and an async client:")
    let server = try startEchoServer(on: loop, at: SocketAddress(ip: "127.0.0.1", port: 0))
    print("  listening on \(server.localAddress) (port 0: the kernel chose)")
    let client = try await loop.connect(to: server.localAddress)
    try client.setNoDelay(true)
    let message = Array("hello over TCP\n".utf8)
    try await client.write(message)
    let echoed = try await read(message.count, from: client)
    print("  the client wrote \(message.count) bytes and read back: \(String(decoding: echoed, as: UTF8.self).debugDescription)")
    print("  local \(client.localAddress.map(String.init(describing:)) ?? "?"), remote \(client.remoteAddress.map(String.init(describing:)) ?? "?")")

    print("2. The same server code on a Unix-domain socket:")
    let path = "/tmp/uvloop-demo-\(getpid()).sock"
    let unixServer = try startEchoServer(on: loop, at: SocketAddress(unixPath: path))
    let unixClient = try await loop.connect(to: unixServer.localAddress)
    try await unixClient.write(Array("hello over a Unix socket".utf8))
    print("  read back: \(String(decoding: try await read(24, from: unixClient), as: UTF8.self).debugDescription)")
    unixClient.close()
    unixServer.close()
    print("  closing the listener removed its socket file: \(access(path, F_OK) != 0)")

    print("3. Backpressure: writing to a peer that does not read")
    let silent = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { _ in }   // accepts, never reads
    let writer = try await loop.connect(to: silent.localAddress)
    let chunk = [UInt8](repeating: 0x2A, count: 64 * 1024)
    // The callback face (not the async write), as a loop callback would use it: its synchronous
    // write is unavailable from async code, which awaits the async one instead.
    func writeUntilFull() throws(LoopError) -> Int {
        var written = 0
        while writer.isWritable {   // the callback face's signal: stop at the high-water mark
            try writer.write(chunk, completion: nil)
            written += chunk.count
        }
        return written
    }
    let written = try writeUntilFull()
    print("  \(written / 1024) KiB accepted before the kernel's buffers filled; \(writer.queuedWriteBytes / 1024) KiB queued in UVLoop, then isWritable turned false (an async write would now wait)")
    writer.resetAndClose()
    silent.close()

    print("4. A descriptor from elsewhere (a pipe, as a C library would hand over):")
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw LoopError.invalidArgument("pipe() failed") }
    let readiness = try loop.readiness(of: fds[0], for: .readable)
    _ = write(fds[1], "x", 1)
    for try await events in readiness {
        print("  the read end became \(events == .readable ? "readable" : "\(events)"), on the loop's thread: \(loop.isOnLoopThread)")
        break   // leaving the loop ends the watch; the descriptor stays open, ours to close
    }
    close(fds[0])
    close(fds[1])

    print("5. Name resolution on libuv's thread pool:")
    let addresses = try await loop.resolve(host: "localhost", port: 80)
    print("  localhost resolves to \(addresses.map(String.init(describing:)).joined(separator: ", "))")

    print("6. Signals: a watch of SIGUSR1, then graceful shutdown on SIGTERM")
    try loop.watchSignal(.user1, oneShot: true) { watch in
        print("  \(watch.signal) arrived, handled on the loop's thread: \(loop.isOnLoopThread)")
    }
    try loop.watchSignal(.terminate, oneShot: true) { _ in
        print("  SIGTERM: shutting down (the open server and client are closed by the shutdown)")
        loop.shutdown()
    }
    kill(getpid(), SIGUSR1)
    try await loop.sleep(for: .milliseconds(10))
    print("  sending SIGTERM to this process; a watched SIGTERM does not kill it")
    kill(getpid(), SIGTERM)
}
