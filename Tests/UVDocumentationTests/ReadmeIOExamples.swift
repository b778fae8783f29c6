import UVLoop
import XCTest

/// The README's I/O and many-loops examples, run for real.
final class ReadmeIOExamples: XCTestCase {
    func testEchoServerAndClient() async throws {
        // docs:begin readme-io
        let thread = try Loop.startThread()
        let loop = thread.loop
        let server = try await loop.invoke {
            try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in   // on the loop's thread
                guard case .success(let connection) = accepted else { return }
                try? connection.startReading { connection, read in
                    if case .bytes(let bytes) = read { try? connection.write(bytes) }   // echo, no copy
                }
            }
        }
        let client = try await loop.connect(to: server.localAddress)   // the async face
        try await client.write(Array("ping".utf8))
        for try await chunk in client.reads {
            print(String(decoding: chunk, as: UTF8.self))              // ping
            break
        }
        try loop.watchSignal(.terminate, oneShot: true) { _ in loop.shutdown() }   // stop on SIGTERM
        // docs:end
        thread.shutdown()
    }

    func testGroupAndMetrics() throws {
        // docs:begin readme-group
        let group = try LoopGroup()                     // one loop per core, each on its own thread
        let loop = group.next()                         // round-robin
        let health = loop.metrics()                     // from any thread: turns, busy/idle time, waiting work
        print(health.iterations, health.utilization(), health.waiting.timers)
        try loop.setStallHandler(threshold: .milliseconds(100)) { stall in
            print("a turn took \(stall.duration)")      // a callback held the loop up
        }
        group.shutdown()
        // docs:end
    }
}
