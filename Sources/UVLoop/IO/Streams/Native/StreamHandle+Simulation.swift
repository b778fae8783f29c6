import CLibUV

extension StreamHandle {
    /// A stream of a simulated network's host: `simulated` carries its bytes instead of a kernel
    /// socket. The libuv handle is a TCP handle that never gets a socket (`uv_tcp_init` creates
    /// none): it is there so that the stream is opened, recorded and closed like a real one, and
    /// its close callback (a later closing phase of the loop) tells the core, as for a real
    /// stream.
    init(simulated: SimulatedStream, loop: NativeLoop, core: StreamCore) throws(LoopError) {
        handle = try LibUVHandle(
            "uv_tcp_init", byteCount: Kind.tcp.byteCount, alignment: Kind.alignment,
            initialize: { stream in
                uv_tcp_init(loop.pointer, UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_tcp_t.self))
            },
            context: core)
        kind = .tcp
        // Unmanaged: the core, set just below, holds the stream until the close callback.
        simulatedReference = .passUnretained(simulated)
        core.simulated = simulated
        simulated.core = core
    }
}
