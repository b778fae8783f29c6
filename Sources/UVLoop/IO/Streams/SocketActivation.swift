import Glibc

/// The sockets a service manager opened for this process: systemd's socket activation
/// (`sd_listen_fds`), which inetd-style launchers and `systemd-socket-activate` speak too.
///
/// The manager binds and listens, then starts the program with the sockets as descriptors 3,
/// 4, … and says so in the environment: `LISTEN_FDS` (how many), `LISTEN_PID` (the process they
/// are for) and, optionally, `LISTEN_FDNAMES` (their names, separated by colons, from
/// `FileDescriptorName=`). The program then accepts at once, and the manager can restart it
/// without refusing a single connection.
///
/// ```swift
/// let listeners = try loop.activatedListeners { accepted in
///     guard case .success(let connection) = accepted else { return }
///     connection.close()
/// }
/// ```
public enum SocketActivation {
    /// The first descriptor a service manager passes (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// One socket passed by the service manager.
    public struct Socket: Sendable, Hashable {
        /// The descriptor: ``SocketActivation/firstDescriptor`` or above.
        public let descriptor: Int32
        /// Its name from `LISTEN_FDNAMES`, or `"unknown"` when the manager gave none (systemd's
        /// default).
        public let name: String
    }

    /// The sockets passed to this process, read from the environment: empty when there are none,
    /// or when they are for another process (`LISTEN_PID` names another, as when a child inherits
    /// the environment). Each socket is made close-on-exec, so that children do not inherit it.
    /// - Parameter unsetEnvironment: removes the three variables, so that children started later
    ///   do not take the sockets for theirs (what `sd_listen_fds(1)` does). Read them once.
    /// - Returns: the sockets, in descriptor order; yours to open (with
    ///   ``Loop/listen(descriptor:ownership:backlog:_:)`` and ``DescriptorOwnership/take``) or close.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `LISTEN_PID` or `LISTEN_FDS` is not a
    ///   number, or a passed descriptor is not open (the manager and the program disagree).
    public static func sockets(unsetEnvironment: Bool = true) throws(LoopError) -> [Socket] {
        defer {
            if unsetEnvironment {
                unsetenv("LISTEN_PID")
                unsetenv("LISTEN_FDS")
                unsetenv("LISTEN_FDNAMES")
            }
        }
        guard let pidText = variable("LISTEN_PID"), let countText = variable("LISTEN_FDS") else { return [] }
        guard let pid = Int32(pidText), pid > 0 else {
            throw .invalidArgument("LISTEN_PID must be a process ID (got \"\(pidText)\"); the service manager sets it")
        }
        guard pid == getpid() else { return [] }
        guard let count = Int32(countText), count >= 0, count <= Int32.max - firstDescriptor else {
            throw .invalidArgument("LISTEN_FDS must be a count of descriptors (got \"\(countText)\")")
        }
        let names = variable("LISTEN_FDNAMES").map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) }
        var sockets: [Socket] = []
        for index in 0..<count {
            let descriptor = firstDescriptor + index
            let flags = fcntl(descriptor, F_GETFD)
            guard flags != -1 else {
                throw .invalidArgument(
                    "LISTEN_FDS says \(count) sockets were passed, but descriptor \(descriptor) is not open; start the program from its service manager")
            }
            _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC)
            let name = names.flatMap { Int(index) < $0.count ? $0[Int(index)] : nil } ?? "unknown"
            sockets.append(Socket(descriptor: descriptor, name: name))
        }
        return sockets
    }

    private static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

extension Loop {
    /// Listens on every socket the service manager passed (see ``SocketActivation``), taking
    /// them: `onConnection` gets each connection any of them accepts, on the loop's thread (tell
    /// them apart by ``StreamConnection/localAddress``). Loop thread only.
    ///
    /// Reads the environment once and removes it (``SocketActivation/sockets(unsetEnvironment:)``).
    /// - Parameters:
    ///   - backlog: how many connections the kernel holds waiting, per socket.
    ///   - onConnection: gets each accepted connection, or an accept error.
    /// - Returns: the listeners, one per socket, in descriptor order; empty when the process was
    ///   not socket-activated.
    /// - Throws: like ``SocketActivation/sockets(unsetEnvironment:)`` and
    ///   ``listen(descriptor:ownership:backlog:_:)`` (a passed socket that does not listen, as with
    ///   systemd's `Accept=yes`, or a datagram socket); listeners opened before the failure are
    ///   closed again.
    public func activatedListeners(
        backlog: Int = 511, _ onConnection: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) -> [StreamListener] {
        preconditionOnLoopThread("Loop.activatedListeners(backlog:_:)")
        var listeners: [StreamListener] = []
        do {
            for socket in try SocketActivation.sockets() {
                listeners.append(try listen(descriptor: socket.descriptor, ownership: .take, backlog: backlog, onConnection))
            }
        } catch {
            for listener in listeners { listener.close() }
            throw error
        }
        return listeners
    }
}
