import XCTest

@testable import UVLoop

/// `OwnHandles`, the process's record of UVLoop's libuv handles behind `Loop.ownsHandle(_:)`.
final class OwnHandlesTests: XCTestCase {
    func testTheProcessRecordOfHandlesAnswersForEveryHandleOpenAndNotAfterwards() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let handles = [client, server].map { UnsafeRawPointer($0.box.value.handle.pointer) }
        XCTAssertTrue(handles.allSatisfy { Loop.ownsHandle($0) })
        XCTAssertTrue(handles.allSatisfy { Int(bitPattern: $0) % OwnHandles.alignment == 0 })
        client.close()
        server.close()
        loop.turn(until: { !handles.contains { Loop.ownsHandle($0) } })
        listener.close()
        loop.shutdown()
    }
}
