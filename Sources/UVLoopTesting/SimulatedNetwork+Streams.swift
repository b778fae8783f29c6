import CLibUV
import UVLoop

/// How segments cross the network: the link's bandwidth and latency, partitions, and the
/// handshake of a connect.
extension SimulatedNetwork {
    /// The instant, in nanoseconds, at which `byteCount` bytes sent now on `path` arrive: after
    /// the segments before them on the link (at its bandwidth), plus the link's latency.
    func arrival(_ path: SimulatedPath, byteCount: Int) -> UInt64 {
        let link = link(path)
        var departure = now.nanoseconds
        if let bandwidth = link.bandwidth, byteCount > 0 {
            let start = max(departure, linkBusyUntil[path] ?? 0)
            let transmission = UInt64(byteCount) * 1_000_000_000 / UInt64(bandwidth)
            departure = start + transmission
            linkBusyUntil[path] = departure
        }
        return departure + link.latency.draw(&random)
    }

    func isCut(_ path: SimulatedPath) -> Bool { cutPaths[path.unordered, default: 0] > 0 }

    /// Carries one segment of `record` from its end `side` to the other: `action` runs on the
    /// other host when it arrives, after the segments sent before it when `ordered`. Across a
    /// partition it waits, and is sent again when the partition heals (as TCP retransmits).
    func transmit(record connection: SimulatedConnectionRecord, from side: Int, byteCount: Int, ordered: Bool = true, _ action: @escaping () -> Void) {
        let source = connection.hosts[side]
        let destination = connection.hosts[1 - side]
        let path = SimulatedPath(source.index, destination.index)
        if isCut(path) {
            heldTransmissions.append { [unowned self] in
                transmit(record: connection, from: side, byteCount: byteCount, ordered: ordered, action)
            }
            return
        }
        var time = arrival(path, byteCount: byteCount)
        if ordered {
            time = max(time, connection.lastArrival[side])
            connection.lastArrival[side] = time
        }
        if byteCount > 0 { record("\(source.name) sends \(byteCount) bytes to \(destination.name), due at \(time)") }
        schedule(at: LoopInstant(nanoseconds: time), host: destination.index, action)
    }

    /// The handshake: the connect request reaches `server` after the link's latency, which
    /// accepts it into the listener on `port` (or refuses it), and the answer comes back after the
    /// return latency. Across a partition the connect fails with `UV_ETIMEDOUT` after
    /// ``connectTimeout``.
    func startConnect(_ stream: SimulatedStream, from client: SimulatedHost, to server: SimulatedHost, port: Int) {
        let path = SimulatedPath(client.index, server.index)
        if isCut(path) {
            schedule(at: now.advanced(by: connectTimeout), host: client.index) {
                stream.connected(status: UV_ETIMEDOUT.rawValue, window: 0, sendBuffer: 0)
            }
            return
        }
        let requestArrival = arrival(path, byteCount: 0)
        schedule(at: LoopInstant(nanoseconds: requestArrival), host: server.index) { [unowned self] in
            guard !stream.isClosed else { return }
            let back = SimulatedPath(server.index, client.index)
            if isCut(back) {
                return schedule(at: now.advanced(by: connectTimeout), host: client.index) {
                    stream.connected(status: UV_ETIMEDOUT.rawValue, window: 0, sendBuffer: 0)
                }
            }
            let answer = arrival(back, byteCount: 0)
            guard !server.refusedPorts.contains(port), let listener = server.listeners[port], !listener.isClosed else {
                record("\(server.name) refuses a connection from \(client.name) to port \(port)")
                return schedule(at: LoopInstant(nanoseconds: answer), host: client.index) {
                    stream.connected(status: UV_ECONNREFUSED.rawValue, window: 0, sendBuffer: 0)
                }
            }
            let accepted = SimulatedStream(simulation: server)
            accepted.localAddress = listener.localAddress
            accepted.remoteAddress = stream.localAddress
            let connection = SimulatedConnectionRecord(client: stream, server: accepted, hosts: [client, server])
            connection.lastArrival[1] = answer
            stream.record = connection
            accepted.record = connection
            connections.append(connection)
            record("\(server.name) accepts a connection from \(client.name) on port \(port)")
            schedule(at: LoopInstant(nanoseconds: answer), host: client.index) { [unowned self] in
                if !stream.connected(status: 0, window: server.receiveWindow, sendBuffer: client.sendBufferSize), !connection.isReset {
                    // The client closed while connecting: the accepted end is reset.
                    connection.isReset = true
                    transmit(record: connection, from: 0, byteCount: 0) { accepted.receiveReset() }
                }
            }
            listener.incoming(accepted, window: client.receiveWindow, sendBuffer: server.sendBufferSize)
        }
    }
}
