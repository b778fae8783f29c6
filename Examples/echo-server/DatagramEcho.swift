import Glibc
import UVLoop

/// The UDP echo of `uvloop-echo --udp`: each datagram goes straight back to its sender, from the
/// loop's receive buffer (no copy, no allocation per datagram). Loop thread only.
final class DatagramEcho {
    private var socket: DatagramSocket?

    func start(on loop: Loop, at address: SocketAddress) throws(LoopError) {
        let socket = try loop.openDatagramSocket(bindingTo: address)
        try socket.startReceiving { socket, read in
            // A receive error (an ICMP error from an earlier sender) ends nothing: go on.
            guard case .datagram(let bytes, let sender, _) = read else { return }
            try? socket.send(bytes, to: sender)
        }
        self.socket = socket
        print("listening on udp \(socket.localAddress)")
        fflush(nil)   // at once, even into a pipe: a script waits for this line
    }

    func stop() {
        socket?.close()
        socket = nil
    }
}
