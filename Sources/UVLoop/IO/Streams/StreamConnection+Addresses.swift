extension StreamConnection {
    /// This end's address, as the kernel reports it; nil when it has none (an unnamed Unix
    /// socket reports the empty path instead). Callable from any thread, also after the
    /// connection has closed.
    public var localAddress: SocketAddress? { addresses.local }

    /// The peer's address, as the kernel reports it; nil when the kernel has none. Callable from
    /// any thread, also after the connection has closed or the peer has reset it.
    public var remoteAddress: SocketAddress? { addresses.remote }

    /// Both addresses, read from the descriptor the first time either is asked for, by the
    /// asking thread, and kept: a connection whose addresses nobody reads never asks the kernel
    /// for them while it is open. The loop's thread reads them just before it closes the
    /// descriptor (`keepAddressesBeforeClosing`), so that they stay known afterwards; the loop's
    /// `ConnectionAddressReads` keeps a read on another thread from reaching a closed descriptor.
    private var addresses: ConnectionAddresses {
        if let known = knownAddresses { return known }
        // The loop's thread is the one that closes the descriptor: open for this call.
        return withLoop { loop in
            if loop.isOnLoopThread { return readAddresses() }
            return loop.connectionAddressReads.readOffLoopThread { readAddresses() }
        }
    }

    /// Reads and keeps the addresses unless they are kept already.
    private func readAddresses() -> ConnectionAddresses {
        if let known = knownAddresses { return known }
        return keepAddresses(ConnectionAddresses.reading(descriptor, as: addressSource))
    }

    /// The addresses if they are kept. Any thread.
    var knownAddresses: ConnectionAddresses? {
        published.loadSecond { state in state.addresses.load() }
    }

    /// Keeps `made` as the addresses unless some are kept already; returns those kept.
    func keepAddresses(_ made: ConnectionAddresses) -> ConnectionAddresses {
        switch published.storeIfNil(.second(made)) {
        case .first(let state): state.addresses.storeIfNil(made)
        case .second(let addresses): addresses
        }
    }

    /// Reads and keeps the addresses unless they are kept already, on the loop's thread, just
    /// before the connection's descriptor is closed.
    func keepAddressesBeforeClosing() {
        guard knownAddresses == nil else { return }
        withLoop { $0.connectionAddressReads.keepBeforeClosing { _ = readAddresses() } }
    }
}
