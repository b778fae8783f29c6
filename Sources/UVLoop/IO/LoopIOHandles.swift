/// The loop's record of its open I/O handles, so that shutdown and detach close every one of
/// them: an owned loop then closes with nothing left on it, and an attached loop leaves its
/// owner's `uv_loop_t` as it found it (`uv_loop_close` returns 0 after one more turn). Also what
/// the handle kinds share on one loop: the descriptors its watches hold, and the buffer its
/// streams read into. Loop thread only.
///
/// Every handle registers through `IOHandleCore` when it opens and unregisters when it closes.
final class LoopIOHandles {
    /// The open handles of the kinds built on `IOHandleCore` (one per connection, listener,
    /// watch...): an array in which each knows its place (`registryIndex`), so that opening and
    /// closing one is an append and a swap with the last, with no hashing and 8 bytes a handle.
    /// Changed only by `register` and `unregister`, on the loop's thread, none of which calls out
    /// while it changes the array, and read in whole by `closeAll`: no two accesses can overlap,
    /// so it goes without the run-time exclusivity check, which every connection's opening and
    /// closing would otherwise pay several times.
    @exclusivity(unchecked) private(set) var handles: [LoopIOHandle] = []
    /// How to close each other open thing (an open file, the loop's file-system requests) at
    /// shutdown or detach. The closure sits in a struct so that the dictionary stores it as it
    /// is: a bare closure value would be wrapped in a thunk (an allocation) on every
    /// registration, which file-system requests make per burst.
    private struct Closer {
        let close: () -> Void
    }
    private var open: [ObjectIdentifier: Closer] = [:]
    /// The descriptors that a descriptor watch of this loop holds, paused ones included (libuv
    /// only knows of those it polls), and those a stream was opened on (borrowed ones, which
    /// libuv knows by their duplicate). See `Loop.watchDescriptor`, `Loop.openConnection`.
    var watchedDescriptors: Set<Int32> = []
    /// The finished requests of the streams' queued writes, kept for the next queued write of any
    /// stream on this loop (with their buffers, up to 64 KiB each): kept per loop rather than per
    /// stream, so that a connection carries none while nothing of it is queued.
    private var freeStreamWrites: [StreamWriteRequest] = []
    /// The large arrays that the streams' async face reads into again (see `StreamChunkRecycler`).
    lazy var streamChunkRecycler = StreamChunkRecycler()
    /// The buffer every datagram socket on this loop receives into (see `DatagramReceiveBuffer`).
    lazy var datagramReceiveBuffer = DatagramReceiveBuffer()
    /// The simulated network this loop's host is on (UVLoopTesting's `SimulatedNetwork`): its
    /// listeners and connections are simulated (see `Loop+StreamSimulation.swift`). Weak: the
    /// simulation's host holds this loop.
    weak var streamSimulation: (any StreamSimulation)? {
        didSet { isSimulated = streamSimulation != nil }
    }
    /// Whether the loop is a simulated host: a plain load for the stream verbs, which read the
    /// weak reference only then.
    private(set) var isSimulated = false
    /// The simulated datagram sockets of that host, by port (see `SimulatedDatagramSocket`).
    lazy var simulatedDatagramPorts = SimulatedDatagramPorts()
    /// The names the simulated network answers lookups from (UVLoopTesting's own table, shared
    /// by its hosts' loops).
    var simulatedNameTable: AnyObject?
    /// The loop's file-system requests, once it has made one (`LoopEngine.fileSystemRequests`).
    var fileSystemRequests: FileSystemRequests?
    /// Name lookups and file transfers (`sendfile`) whose answer has not come back from libuv's
    /// thread pool.
    private(set) var otherPoolRequestsInFlight = 0

    /// Requests on libuv's thread pool that UVLoop made and that always complete: file-system
    /// operations, name lookups and file transfers (not the user's own thread-pool jobs, which may wait for
    /// anything).
    var poolRequestsInFlight: Int { (fileSystemRequests?.inFlightCount ?? 0) + otherPoolRequestsInFlight }

    /// A request for a stream's queued write: a kept one, or a new one.
    func takeStreamWrite() -> StreamWriteRequest {
        freeStreamWrites.popLast() ?? StreamWriteRequest(retainedCapacity: 64 * 1024)
    }

    /// How many finished requests of the streams' queued writes a loop keeps at most.
    static let keptStreamWritesLimit = 16

    /// Keeps a finished request of a stream's queued write for the next one, up to
    /// `keptStreamWritesLimit` per loop: a burst of queued writes, on however many streams,
    /// leaves no more than that behind.
    func recycleStreamWrite(_ request: StreamWriteRequest) {
        if freeStreamWrites.count < Self.keptStreamWritesLimit { freeStreamWrites.append(request) }
    }

    /// The number of finished write requests kept for the streams' next queued writes.
    var keptStreamWriteCount: Int { freeStreamWrites.count }

    /// Counts `count` requests of a name lookup or a file transfer onto libuv's thread pool (a
    /// negative count when they come back).
    func poolRequestsStarted(_ count: Int) { otherPoolRequestsInFlight += count }

    /// The number of open handles.
    var count: Int { handles.count + open.count }

    var isEmpty: Bool { handles.isEmpty && open.isEmpty }

    /// Records `handle` as open; its `closeForLoopEnding()` runs at shutdown or detach unless it
    /// has been unregistered before. Inlined, like `unregister`, so that a core's own calls reach
    /// its registry index directly (`IOHandleCore`'s overrides are final) rather than through
    /// the class's table.
    @inline(__always)
    func register(_ handle: LoopIOHandle) {
        handle.setRegistryIndex(Int32(handles.count))
        handles.append(handle)
    }

    /// Forgets `handle`: it was closed. Nothing happens if it is not recorded.
    @inline(__always)
    func unregister(_ handle: LoopIOHandle) {
        let index = Int(handle.registryIndex)
        guard index >= 0, index < handles.count, handles[index] === handle else { return }
        let last = handles.removeLast()
        if index < handles.count {
            handles[index] = last
            last.setRegistryIndex(Int32(index))
        }
        handle.setRegistryIndex(-1)
    }

    /// Records `key`'s handle as open; `close` runs at shutdown or detach unless `key` has been
    /// unregistered before. `close` must unregister `key` and call no user code synchronously
    /// (it may post, or resume a task).
    func register(_ key: ObjectIdentifier, close: @escaping () -> Void) {
        open[key] = Closer(close: close)
    }

    /// Forgets `key`'s handle: it was closed.
    func unregister(_ key: ObjectIdentifier) {
        open[key] = nil
    }

    /// Closes every registered handle, in no particular order: what the loop's shutdown and
    /// detach need. Closing one may register or close others (a listener's pending connections):
    /// repeat until none is left.
    func closeAll() {
        while !isEmpty {
            if let handle = handles.last {
                unregister(handle)
                handle.closeForLoopEnding()
            } else if let (key, closer) = open.first {
                open[key] = nil
                closer.close()
            }
        }
    }
}

/// An I/O handle as the loop's record of open handles keeps it (`LoopIOHandles`): every
/// `IOHandleCore`, which overrides each member. A class rather than a protocol so that the record
/// keeps a handle in one word (a protocol's existential takes two, the reference and the
/// conformance), and without stored properties, so that each core's own fields keep their layout.
class LoopIOHandle: HandleContext {
    /// Where the record keeps the handle (-1 when it does not).
    var registryIndex: Int32 { preconditionFailure("UVLoop internal error: LoopIOHandle.registryIndex not overridden") }
    /// Moves the handle to `index` of the record (-1: out of it); only the record calls it.
    func setRegistryIndex(_ index: Int32) {
        preconditionFailure("UVLoop internal error: LoopIOHandle.setRegistryIndex not overridden")
    }
    /// Closes the handle at the loop's shutdown or detach. Calls no user code synchronously (it
    /// may post, or resume a task).
    func closeForLoopEnding() { preconditionFailure("UVLoop internal error: LoopIOHandle.closeForLoopEnding not overridden") }
}
