// The raw C libuv peer of udp_ping_pong and udp_throughput (Sources/CPeers/cpeers_udp.c): the
// whole exchange runs in C on two libuv loop threads; Swift only starts, runs and stops it.
import CPeers

extension CSide {
    /// n datagrams per run under the window; ns per datagram answered (ping-pong) or delivered.
    static func udpExchange(_ shape: UDPExchangeShape, n: Int) -> SessionMaker {
        return {
            let u = cp_udp_start(shape.messageBytes, Int32(shape.window), Int32(shape.ackEvery), shape.replyBytes)!
            let total = shape.total(n)
            return Session(run: {
                let ns = cp_udp_run(u, total)
                return Sample(value: ns / Double(total), ops: total)
            }, close: { cp_udp_stop(u) })
        }
    }
}
