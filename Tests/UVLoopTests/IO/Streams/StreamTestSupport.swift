import CLibUV
import Foundation
import XCTest

@testable import UVLoop

extension Loop {
    /// Steps the loop (non-blocking turns) until `condition` holds; fails the test after
    /// `maxTurns` turns instead of hanging.
    func turn(until condition: () -> Bool, maxTurns: Int = 2_000_000, file: StaticString = #filePath, line: UInt = #line) {
        var turns = 0
        while !condition() {
            _ = try? runOnce()
            turns += 1
            if turns > maxTurns {
                XCTFail("condition not reached after \(maxTurns) turns", file: file, line: line)
                return
            }
        }
    }
}

/// What a test connection has read so far, and how reading ended.
final class ReadLog {
    var bytes: [UInt8] = []
    var ended = false
    var failure: LoopError?

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// A read handler that records into this log.
    var handler: (StreamConnection, StreamRead) -> Void {
        { [self] _, read in
            switch read {
            case .bytes(let chunk): bytes += chunk
            case .end: ended = true
            case .failed(let error): failure = error
            }
        }
    }
}

/// A loopback address with a port the kernel chooses.
func loopback() -> SocketAddress { try! SocketAddress(ip: "127.0.0.1", port: 0) }

/// A fresh directory for Unix sockets, removed by the caller.
func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "uvloop-streams-\(UUID().uuidString.prefix(8))"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A connected pair on `loop`: the client's end and the server's end, and the listener.
func connectedPair(
    on loop: Loop, at address: SocketAddress = loopback(), file: StaticString = #filePath, line: UInt = #line
) throws -> (client: StreamConnection, server: StreamConnection, listener: StreamListener) {
    var server: StreamConnection?
    var client: StreamConnection?
    let listener = try loop.listen(on: address) { result in server = try? result.get() }
    try loop.connect(to: listener.localAddress) { result in client = try? result.get() }
    loop.turn(until: { server != nil && client != nil }, file: file, line: line)
    return (client!, server!, listener)
}

/// A connected pair on `loop` through the async faces, from any task: the client's end, the
/// server's end (the listener's first connection) and the listener.
func asyncConnectedPair(
    on loop: Loop, at address: SocketAddress = loopback()
) async throws -> (client: StreamConnection, server: StreamConnection, listener: StreamListener) {
    let listener = try await loop.listen(on: address)
    let client = try await loop.connect(to: listener.localAddress)
    var connections = listener.connections.makeAsyncIterator()
    guard let server = try await connections.next() else { throw LoopError.streamClosed }
    return (client, server, listener)
}
