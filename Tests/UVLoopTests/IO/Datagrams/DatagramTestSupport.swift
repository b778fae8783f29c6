import XCTest

@testable import UVLoop

/// What a test socket's receive handler has seen: the datagrams (copied) and the errors.
final class DatagramLog {
    var datagrams: [Datagram] = []
    var failures: [LoopError] = []

    var texts: [String] { datagrams.map { String(decoding: $0.bytes, as: UTF8.self) } }

    /// A receive handler that records into this log.
    var handler: (DatagramSocket, DatagramRead) -> Void {
        { [self] _, read in
            switch read {
            case .datagram(let bytes, let sender, let truncated):
                datagrams.append(Datagram(bytes: Array(bytes), sender: sender, isTruncated: truncated))
            case .failed(let error):
                failures.append(error)
            }
        }
    }
}

/// A datagram socket bound to a loopback port the kernel chooses. Loop thread only.
func loopbackSocket(on loop: Loop, options: DatagramSocket.Options = .init()) throws -> DatagramSocket {
    try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0), options: options)
}

