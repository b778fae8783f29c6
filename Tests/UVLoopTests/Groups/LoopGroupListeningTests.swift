import UVTestSupport
import XCTest
@testable import UVLoop

/// `LoopGroup.listen`: one listener per loop on one port, connections spread by the kernel.
final class LoopGroupListeningTests: XCTestCase {
    func testConnectionsSpreadOverTheLoopsAndStayOnTheLoopThatAcceptedThem() throws {
        let group = try LoopGroup(loopCount: 2)
        let acceptedOn = Recorder<Int>()
        let loops = group.loops
        let allAccepted = Gate()
        let total = 64
        let listeners = try group.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let connection) = accepted else { return }
            let index = loops.firstIndex { $0 === connection.loop }!
            XCTAssertTrue(loops[index].isOnLoopThread, "the handler runs on the accepting loop")
            acceptedOn.append(index)
            connection.close()
            if acceptedOn.values.count == total { allAccepted.open() }
        }
        XCTAssertEqual(listeners.count, 2)
        XCTAssertEqual(Set(listeners.map(\.localAddress)).count, 1, "one port for every loop")
        XCTAssertNotEqual(listeners[0].localAddress.port, 0)

        let clients = try Loop.startThread(name: "clients")
        let address = listeners[0].localAddress
        let connected = Counter()
        try clients.loop.invoke {
            for _ in 0..<total {
                try? clients.loop.connect(to: address) { result in
                    if case .success(let connection) = result { _ = connected.increment(); connection.close() }
                }
            }
        }
        allAccepted.pass()
        let perLoop = Dictionary(grouping: acceptedOn.values, by: { $0 }).mapValues(\.count)
        XCTAssertEqual(perLoop.values.reduce(0, +), total)
        XCTAssertEqual(perLoop.count, 2, "the kernel spread \(total) connections over both loops: \(perLoop)")
        clients.shutdown()
        group.shutdown()
    }

    func testAUnixPathIsRefusedAndSoIsTheGroupsOwnThread() throws {
        let group = try LoopGroup(loopCount: 2)
        XCTAssertThrowsError(try group.listen(on: SocketAddress(unixPath: "/tmp/uvloop-group.sock")) { _ in }) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("not a Unix path"), message)
        }
        let refusal = try group.loops[0].invoke { () -> LoopError? in
            do throws(LoopError) {
                _ = try group.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { _ in }
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(refusal, .wouldDeadlock(operation: "LoopGroup.listen(on:backlog:_:)"))
        group.shutdown()
    }

    func testShutdownClosesEveryListenerSoThePortIsFreeAgain() throws {
        let group = try LoopGroup(loopCount: 2)
        let listeners = try group.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { _ in }
        let port = listeners[0].localAddress.port!
        group.shutdown()
        let again = try LoopGroup(loopCount: 1)
        let reopened = try again.listen(on: SocketAddress(ip: "127.0.0.1", port: port)) { _ in }
        XCTAssertEqual(reopened[0].localAddress.port, port)
        again.shutdown()
    }
}
