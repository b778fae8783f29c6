import UVLoop
import UVLoopTesting
import XCTest

/// more connections than the async face's accept queue holds, taken later.
final class SimulatedNetworkAcceptBacklogTests: XCTestCase {
    func testEveryConnectionInTheBacklogIsAcceptedOnceTheConsumerTakesThem() throws {
        let network = SimulatedNetwork(seed: 1)
        defer { network.shutdown() }
        let serverLoop = try network.addHost("server", address: "10.0.0.1").loop
        let clientLoop = try network.addHost("client", address: "10.0.0.2").loop
        let address = try SocketAddress(ip: "10.0.0.1", port: 7)
        let listener = LoopBound<StreamListener?>(nil, loop: serverLoop)
        Task(executorPreference: serverLoop) { listener.value = try await serverLoop.listen(on: address) }
        try network.runUntilIdle()
        XCTAssertNotNil(listener.value)
        var connected = 0
        for _ in 0..<70 {
            try clientLoop.connect(to: address) { result in if (try? result.get()) != nil { connected += 1 } }
        }
        try network.advanceTime(by: .seconds(1))
        XCTAssertEqual(connected, 70)
        let accepted = LoopBound(0, loop: serverLoop)
        Task(executorPreference: serverLoop) {
            for try await _ in listener.value!.connections { accepted.value += 1 }
        }
        try network.advanceTime(by: .seconds(1))
        // A real listener accepts the rest of the backlog once its queue has room (libuv watches
        // the socket again after uv_accept); the simulated one hears of each arrival only once.
        XCTAssertEqual(accepted.value, 70)
    }
}
