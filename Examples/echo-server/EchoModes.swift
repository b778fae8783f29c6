import Glibc
import UVLoop

extension EchoServer {
    /// Serves on every socket a service manager passed (systemd's socket activation).
    func startActivated() throws(LoopError) {
        activated = try loop.activatedListeners { [self] accepted in serve(accepted) }
        guard !activated.isEmpty else {
            throw .invalidArgument("LISTEN_FDS is set but passes no socket for this process; \(Options.usage)")
        }
        for listener in activated { print("listening on \(listener.localAddress) (socket-activated)") }
        fflush(nil)
    }
}

extension EchoServer {
    /// Echoes standard input to standard output, whatever they are (terminal, pipe, socket),
    /// until standard input ends; then, once the echoes are written, the loop shuts down. `raw`
    /// puts a terminal in raw mode, which closing the stream (or the process ending) undoes.
    func startStdio(raw: Bool) throws(LoopError) {
        let input = try loop.openStandardStream(.input)
        let output = try loop.openStandardStream(.output)
        if raw, input.isTerminal { try input.setTerminalMode(.raw) }
        connections.insert(input)
        connections.insert(output)
        var writing = 0
        var ended = false
        let finishIfDone = { [loop] in
            if ended, writing == 0 { loop.shutdown() }
        }
        // Backpressure: stop reading while the output queue is over its high-water mark.
        output.setWritableHandler { _ in try? input.startReading() }
        try input.startReading { _, read in
            switch read {
            case .bytes(let bytes):
                writing += 1
                try? output.write(bytes) { _ in
                    writing -= 1
                    finishIfDone()
                }
                if !output.isWritable { input.stopReading() }
            case .end, .failed:
                ended = true
                finishIfDone()
            }
        }
    }
}

extension EchoServer {
    /// Serves the listening sockets that arrive over the Unix socket `descriptor`: what a worker
    /// of a pre-forked server does with the socket its parent bound.
    func startFromChannel(_ descriptor: Int32) throws(LoopError) {
        let channel = try loop.openDescriptorChannel(descriptor: descriptor, ownership: .take)
        connections.insert(channel)
        try channel.startReading { [self] channel, read in
            guard case .bytes = read else { return drop(channel) }   // the parent is gone: serve on
            while let received = try? channel.takeReceivedDescriptor() {
                do {
                    let listener = try loop.listen(descriptor: received, ownership: .take) { [self] in serve($0) }
                    activated.append(listener)
                    print("listening on \(listener.localAddress) (received)")
                    fflush(nil)
                } catch {
                    close(received)
                    printError("uvloop-echo: the received descriptor cannot listen: \(error)")
                }
            }
        }
    }
}
