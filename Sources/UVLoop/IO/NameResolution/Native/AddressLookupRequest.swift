import CLibUV
import Glibc

/// One `uv_getaddrinfo` on libuv's thread pool: the request (alive until its callback, which
/// frees it) and what the callback calls. Loop thread only, apart from the pool thread that
/// libuv runs `getaddrinfo` on, which touches only libuv's part of the request.
final class AddressLookupRequest: NativeIOHandle {
    private let request: UnsafeMutablePointer<uv_getaddrinfo_t>
    let done: (Result<[SocketAddress], LoopError>) -> Void
    /// A lookup a simulated network answers (`SimulatedNameLookup.swift`), nil for a real one.
    var simulated: SimulatedLookup?

    init(_ done: @escaping (Result<[SocketAddress], LoopError>) -> Void) {
        request = .allocate(capacity: 1)
        UnsafeMutableRawPointer(request).initializeMemory(
            as: UInt8.self, repeating: 0, count: MemoryLayout<uv_getaddrinfo_t>.size)
        self.done = done
    }

    deinit { request.deallocate() }

    /// Starts resolving `host` (addresses for stream sockets, IPv4 and IPv6) with `port` set in
    /// each address. `done` runs on the loop's thread with the addresses, in the resolver's order,
    /// or libuv's error (`UV_EAI_CANCELED` after `cancel`) as ``LoopError/libuv(function:code:)``.
    static func start(
        on loop: NativeLoop, host: String, port: UInt16, _ done: @escaping (Result<[SocketAddress], LoopError>) -> Void
    ) -> Result<AddressLookupRequest, LoopError> {
        let lookup = AddressLookupRequest(done)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        // Unmanaged: the request carries its owner until the callback, which releases it.
        lookup.request.pointee.data = Unmanaged.passRetained(lookup).toOpaque()
        let status = uv_getaddrinfo(loop.pointer, lookup.request, { request, status, list in
            let lookup = Unmanaged<AddressLookupRequest>.fromOpaque(request!.pointee.data!).takeRetainedValue()
            var addresses: [SocketAddress] = []
            var entry = list
            while let current = entry {
                if let address = current.pointee.ai_addr, let parsed = SocketAddress(UnsafePointer(address)),
                   !addresses.contains(parsed) {
                    addresses.append(parsed)
                }
                entry = current.pointee.ai_next
            }
            uv_freeaddrinfo(list)
            lookup.done(status == 0 ? .success(addresses) : .failure(.libuv(status, "getaddrinfo")))
        }, host, String(port), &hints)
        guard status == 0 else {
            Unmanaged.passUnretained(lookup).release()
            return .failure(.libuv(status, "uv_getaddrinfo"))
        }
        return .success(lookup)
    }

    /// Withdraws the lookup (see `cancel()`): what closing a request means.
    func close() { cancel() }

    /// A request keeps the loop alive until its callback; there is no reference to drop.
    func unref() {}

    /// Withdraws the lookup if no pool thread has started it (`uv_cancel`); the callback then
    /// reports `UV_EAI_CANCELED`. Loop thread only.
    func cancel() {
        if let simulated { return cancelSimulated(simulated) }
        _ = uv_cancel(UnsafeMutableRawPointer(request).assumingMemoryBound(to: uv_req_t.self))
    }
}
