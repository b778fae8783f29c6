// The raw C libuv peer of tcp_ping_pong and tcp_echo_throughput (Sources/CPeers/cpeers_tcp.c):
// the whole exchange runs in C on two libuv loop threads; Swift only starts, runs and stops it.
import CPeers

extension CSide {
    /// `connections` connections, each doing n / connections round trips of `messageBytes` per run;
    /// ns per round trip (per echoed message).
    static func tcpEcho(connections: Int, messageBytes: Int, n: Int) -> SessionMaker {
        return {
            let t = cp_tcp_start(Int32(connections), messageBytes)!
            let rounds = max(1, n / connections) // at least one round trip each, whatever --n says
            return Session(run: {
                let ns = cp_tcp_run(t, rounds)
                return Sample(value: ns / Double(rounds * connections), ops: rounds * connections)
            }, close: { cp_tcp_stop(t) })
        }
    }
}
