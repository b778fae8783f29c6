@testable import UVLoop
import XCTest

/// What the simulated network's seam costs a real datagram socket and a real name lookup.
final class DatagramSimulationSeamTests: XCTestCase {
    func testAUDPHandleStaysAPlainValue() {
        // No reference counting when a core reads its handle: the simulated socket is held by the
        // handle's context, not by the struct.
        XCTAssertTrue(_isPOD(UDPHandle.self))
    }

    func testARealLoopOpensRealSocketsAndLooksNamesUpForReal() throws {
        let loop = try Loop.manual()
        defer { loop.shutdown() }
        let socket = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        XCTAssertNil(socket.box.value.handle.simulated)
        XCTAssertNotEqual(socket.localAddress.port, 0, "bound by the kernel")
        var answer: [SocketAddress]?
        try loop.resolve(host: "127.0.0.1", port: 1) { answer = try? $0.get() }
        try loop.runUntilIdle()
        XCTAssertEqual(answer, [try SocketAddress(ip: "127.0.0.1", port: 1)])
    }
}
