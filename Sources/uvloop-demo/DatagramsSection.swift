import UVLoop

/// UDP on one real loop: an echo server on the callback face (datagrams lent, echoed without a
/// copy), an async client, batched receives, a truncated datagram, and a connected socket that
/// hears the kernel's "port unreachable".
func runDatagramsSection() throws {
    print("\n== Datagrams: UDP sockets, both faces, truncation, connected UDP")
    let loop = try Loop()
    Task(executorPreference: loop) {
        do {
            try await narrateDatagrams(loop: loop)
        } catch {
            print("  the section failed: \(error)")
        }
        loop.shutdown()
    }
    try loop.run()
    print("  the loop shut down and closed every socket.")
}

private func narrateDatagrams(loop: Loop) async throws {
    print("1. An echo server whose receive handler sends each datagram back from the loop's buffer:")
    let server = try openEchoSocket(on: loop)  // this task runs on the loop's thread
    print("  bound to \(server.localAddress); batched receives (recvmmsg): \(server.isBatchingReceives)")

    print("2. An async client sends three datagrams and reads the echoes:")
    let client = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
    var replies = client.datagrams.makeAsyncIterator()
    for word in ["one", "two", "three"] {
        try await client.send(Array(word.utf8), to: server.localAddress)
        guard let reply = try await replies.next() else { break }
        print("  sent \(word.debugDescription), got \(String(decoding: reply.bytes, as: UTF8.self).debugDescription) from \(reply.sender)")
    }

    print("3. A socket that keeps at most 8 bytes of a datagram reports the rest as lost:")
    var small = DatagramSocket.Options()
    small.maximumDatagramSize = 8
    let cramped = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0), options: small)
    try await client.send(Array("a longer datagram".utf8), to: cramped.localAddress)
    var crampedDatagrams = cramped.datagrams.makeAsyncIterator()
    if let datagram = try await crampedDatagrams.next() {
        print("  received \(String(decoding: datagram.bytes, as: UTF8.self).debugDescription), truncated: \(datagram.isTruncated)")
    }

    print("4. A connected socket whose peer's port is closed hears the ICMP error:")
    let gone = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
    gone.close()
    let lonely = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
    try await lonely.connect(to: gone.localAddress)
    var lonelyDatagrams = lonely.datagrams.makeAsyncIterator()
    try await lonely.send(Array("anyone?".utf8))
    do {
        _ = try await lonelyDatagrams.next()
    } catch {
        print("  the receive failed: \(error)")
    }
    for socket in [client, cramped, lonely, server] { socket.close() }
}

/// The echo server of step 1, opened on the loop's thread with its receive handler.
private func openEchoSocket(on loop: Loop) throws -> DatagramSocket {
    let server = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
    try server.startReceiving { socket, read in
        guard case .datagram(let bytes, let sender, _) = read else { return }
        try? socket.send(bytes, to: sender)
    }
    return server
}
