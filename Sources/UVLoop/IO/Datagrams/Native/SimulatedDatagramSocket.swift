import CLibUV

/// What a simulated network (`SimulatedNetwork` in UVLoopTesting) does for the datagram sockets
/// of one host's loop, in place of the kernel: binds ports, carries datagrams to their
/// destination (or loses them), and runs work in a later callback. A loop whose stream
/// simulation also conforms to this protocol opens its datagram sockets on it. Loop thread only.
package protocol DatagramSimulation: AnyObject {
    /// Binds `socket` to `address` (a port of 0 is given one) and sets its `localAddress`.
    /// - Throws: `LoopError.libuv` with `UV_EADDRINUSE` or `UV_EADDRNOTAVAIL` as a kernel would;
    ///   `LoopError.invalidArgument` for an address the simulation does not carry.
    func bind(_ socket: SimulatedDatagramSocket, to address: SocketAddress) throws(LoopError)
    /// Carries one datagram from `socket` to `address`: delivered later, or lost.
    func send(_ socket: SimulatedDatagramSocket, _ bytes: [UInt8], to address: SocketAddress)
    /// `socket` closed: its port is free again.
    func closed(_ socket: SimulatedDatagramSocket)
    /// Runs `body` in a later callback of `socket`'s loop, at the current time.
    func later(_ socket: SimulatedDatagramSocket, _ body: @escaping () -> Void)
}

/// The bound datagram sockets of one simulated host's loop, by port, and the size of their
/// receive buffers. Loop thread only.
package final class SimulatedDatagramPorts {
    /// The sockets bound on this host, by port.
    package var sockets: [Int: SimulatedDatagramSocket] = [:]
    /// The bytes of datagrams a socket keeps while its owner does not receive them, beyond which
    /// arrivals are dropped (Linux's default `SO_RCVBUF`, 212,992 bytes; the kernel counts its
    /// own bookkeeping too, the simulation only the datagrams' bytes). For sockets opened later.
    package var receiveBufferSize = 212_992
}

extension Loop {
    /// The simulated datagram sockets of this loop's host (see `SimulatedDatagramPorts`). Loop
    /// thread only.
    package var simulatedDatagramPorts: SimulatedDatagramPorts {
        preconditionOnLoopThread("SimulatedNetwork's datagrams")
        return engine.ioHandles.simulatedDatagramPorts
    }
}

/// One simulated UDP socket, standing in for the kernel's behind a `UDPHandle`: its addresses,
/// the datagrams that arrived while its owner was not receiving (up to its receive buffer, the
/// rest dropped as the kernel drops them), and the calls into the handle's delegate that
/// libuv's callbacks would make. Loop thread only.
package final class SimulatedDatagramSocket {
    package let simulation: any DatagramSimulation
    /// The handle's context, whose delegate hears of datagrams (nil once closed).
    weak var context: UDPHandleContext?
    package var localAddress: SocketAddress?
    package private(set) var remoteAddress: SocketAddress?
    package private(set) var isClosed = false
    /// The receive buffer's size in bytes (see `SimulatedDatagramPorts.receiveBufferSize`).
    package let receiveBufferSize: Int
    /// How many datagrams arrived to a full receive buffer and were dropped.
    package private(set) var droppedCount = 0
    /// A datagram the simulation holds back to send after this socket's next one (reordering),
    /// with the number that tells it apart; nil when none is held.
    package var heldBack: (number: UInt64, release: () -> Void)?

    private let largestDatagram: Int
    private var isReceiving = false
    private var waiting: [(bytes: [UInt8], sender: SocketAddress)] = []
    private var waitingHead = 0
    private var waitingBytes = 0
    private var drainScheduled = false

    init(simulation: any DatagramSimulation, largestDatagram: Int, receiveBufferSize: Int) {
        self.simulation = simulation
        self.largestDatagram = largestDatagram
        self.receiveBufferSize = receiveBufferSize
    }

    // MARK: the simulation's side

    /// A datagram from `sender` arrives (from one of the simulation's deliveries, a callback of
    /// the loop): handed to the owner at once when it receives and nothing waits before it, else
    /// kept while the receive buffer has room, else dropped. A connected socket takes datagrams
    /// from its peer only, as the kernel filters them.
    package func receive(_ bytes: [UInt8], from sender: SocketAddress) {
        guard !isClosed else { return }
        if let remoteAddress, remoteAddress != sender { return }
        if isReceiving, waitingHead == waiting.count {
            return hand(bytes, from: sender)
        }
        guard waitingBytes + bytes.count <= receiveBufferSize else {
            droppedCount += 1
            return
        }
        waiting.append((bytes, sender))
        waitingBytes += bytes.count
        scheduleDrain()
    }

    /// An error the network reports for this socket (`UV_ECONNREFUSED` when a datagram of a
    /// connected socket found no socket at its destination), as libuv's receive callback does.
    package func receiveFailure(_ status: Int32) {
        guard !isClosed, isReceiving, remoteAddress != nil else { return }
        context?.delegate?.udpReceiveDidFail(status)
    }

    private func hand(_ bytes: [UInt8], from sender: SocketAddress) {
        let truncated = bytes.count > largestDatagram
        bytes.withUnsafeBytes { raw in
            let shown = UnsafeRawBufferPointer(rebasing: raw.prefix(largestDatagram))
            context?.delegate?.udpDidReceive(shown, from: sender, truncated: truncated)
        }
    }

    private func scheduleDrain() {
        guard isReceiving, !drainScheduled, waitingHead < waiting.count else { return }
        drainScheduled = true
        simulation.later(self) { [self] in
            drainScheduled = false
            while isReceiving, !isClosed, waitingHead < waiting.count {
                let next = waiting[waitingHead]
                waitingHead += 1
                waitingBytes -= next.bytes.count
                hand(next.bytes, from: next.sender)
            }
            if waitingHead == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                waitingHead = 0
            }
        }
    }

    // MARK: the handle's side

    func bind(_ address: SocketAddress) -> Int32 {
        do throws(LoopError) {
            try simulation.bind(self, to: address)
            return 0
        } catch {
            if case .libuv(_, let code) = error { return code }
            return UV_EINVAL.rawValue
        }
    }

    func connect(_ address: SocketAddress?) -> Int32 {
        if let address {
            guard address.ip != nil, address.port != nil, address.port != 0 else { return UV_EINVAL.rawValue }
            if remoteAddress != nil { return UV_EISCONN.rawValue }
        } else if remoteAddress == nil {
            return UV_ENOTCONN.rawValue
        }
        remoteAddress = address
        return 0
    }

    func startReceiving() -> Int32 {
        guard !isClosed else { return UV_EBADF.rawValue }
        isReceiving = true
        scheduleDrain()
        return 0
    }

    func stopReceiving() { isReceiving = false }

    /// Sends at once (the simulation never makes a sender wait), after libuv's checks: an
    /// address on a connected socket, none on an unconnected one, a datagram larger than UDP
    /// carries.
    func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress?) -> UDPSendOutcome {
        guard !isClosed else { return .failed(UV_EBADF.rawValue, "uv_udp_try_send") }
        if address != nil, remoteAddress != nil { return .failed(UV_EISCONN.rawValue, "uv_udp_try_send") }
        guard let destination = address ?? remoteAddress else {
            return .failed(UV_EDESTADDRREQ.rawValue, "uv_udp_try_send")
        }
        guard bytes.count <= 65_507 else { return .failed(UV_EMSGSIZE.rawValue, "uv_udp_try_send") }
        simulation.send(self, Array(bytes), to: destination)
        return .sent
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        isReceiving = false
        waiting.removeAll()
        waitingBytes = 0
        simulation.closed(self)
    }
}

extension UDPHandle {
    /// A datagram socket of a simulated network's host: `simulated` carries its datagrams
    /// instead of a kernel socket. The libuv handle is a UDP handle that never gets a socket
    /// (`uv_udp_init` makes none until a bind): it is there so that the socket is opened,
    /// recorded and closed like a real one, and its close callback tells the delegate.
    init(simulated: SimulatedDatagramSocket, loop: NativeLoop, receiveBuffer: DatagramReceiveBuffer, receiveLength: Int) throws(LoopError) {
        let context = UDPHandleContext(receiveBuffer: receiveBuffer, receiveLength: receiveLength)
        handle = try LibUVHandle("uv_udp_init", initialize: { uv_udp_init(loop.pointer, $0) }, context: context)
        // Unmanaged: the context, set just below, holds the socket until the close callback.
        simulatedReference = .passUnretained(simulated)
        context.simulated = simulated
        simulated.context = context
    }
}
