/// Where a reader's chunks go: the callback face's handler, or the async face's channel. Loop
/// thread only.
protocol FileChunkSink: AnyObject {
    /// The next chunk, in the buffer (lent for the call). False when the sink has no room for it
    /// now (the async face, whose consumer has not taken enough): the chunk stays in its buffer,
    /// and the reader offers it again at `consumerTook`.
    func chunk(_ buffer: FileBuffer) -> Bool
    /// The reader ended: at the end of the file or its count (success), or with an error.
    /// Called at most once, and never after `cancel`.
    func end(_ result: Result<Void, LoopError>)
    /// The reader has delivered what had its turn and started the reads its free buffers allow; `busy`
    /// slots are still taken (their chunks come without the consumer's help). The async face
    /// wakes its waiting consumer here, with every chunk ready, rather than at each chunk.
    func settled(busy: Int)
    /// The loop is ending and the reader has no read in flight: end without calling user code
    /// (a task may be resumed).
    func loopIsEnding(_ refusal: LoopError)
}

/// The loop-thread side of a sequential reader that reads ahead (``LoopFile/readChunks(chunkLength:readAhead:from:count:_:)``
/// and the async ``FileChunks``): up to `readAhead` reads in flight at successive offsets, each
/// into a buffer of its own, delivered in file order.
///
/// The buffers are a ring of `readAhead` slots: slots from `head` to `tail` are taken (a read in
/// flight, or a chunk read and waiting for its turn or for the sink's room), the others free. A
/// chunk is delivered from `head`; its slot then reads again at the next offset. A read shorter than asked (the file
/// ended, or was truncated, while later reads were in flight) makes the reads after it stale
/// (`generation`): they are dropped when their turn comes, and reading goes on from where the
/// short one ended, so that no byte is skipped or repeated. Every read's completion is a closure
/// made once per slot: reading allocates nothing per chunk.
///
/// The core keeps itself alive through those closures while it reads, and is one of the loop's
/// open handles, so that the loop's ending ends a reader that has no read in flight (paused, or
/// waiting for its consumer).
final class FileChunkReaderCore {
    private enum Slot {
        case free, reading, done(Result<Int, LoopError>), stale
    }

    private let file: LoopFileCore
    private weak var engine: LoopEngine?
    private let chunkLength: Int
    let readAhead: Int
    private var sink: (any FileChunkSink)?
    private var buffers: [FileBuffer]
    private var slots: [Slot]
    private var offsets: [Int64]
    private var lengths: [Int]
    private var generations: [UInt64]
    /// A closure in a struct: an array stores it as it is, where a bare closure would be wrapped in
    /// a reabstraction thunk (an allocation) each time it is taken out.
    private struct Completion {
        let call: (Result<Int, LoopError>) -> Void
    }
    private var completions: [Completion] = []
    private var head = 0
    private var tail = 0
    /// Slots taken: reading, or read and waiting for their turn.
    private(set) var busy = 0
    /// Reads whose completion has not run.
    private var inFlight = 0
    private var nextOffset: Int64
    private let endOffset: Int64
    private var generation: UInt64 = 0
    private(set) var isPaused = false
    private(set) var isEnded = false
    private var delivering = false
    /// The sink refused the chunk at `head` for room: it waits in its buffer until the consumer
    /// takes (`consumerTook`).
    private var heldForRoom = false
    /// The loop is ending; the reader ends once it waits for nothing that can still come.
    private var loopEnding = false

    init(
        file: LoopFileCore, engine: LoopEngine, chunkLength: Int, readAhead: Int, offset: Int64, count: Int64?, sink: any FileChunkSink
    ) throws(LoopError) {
        try file.checkOpen()
        self.file = file
        self.engine = engine
        self.chunkLength = chunkLength
        self.readAhead = readAhead
        self.sink = sink
        nextOffset = offset
        endOffset = count.map { offset.addingReportingOverflow($0).overflow ? Int64.max : offset + $0 } ?? Int64.max
        var buffers: [FileBuffer] = []
        for _ in 0..<readAhead { buffers.append(try FileBuffer(capacity: chunkLength)) }
        self.buffers = buffers
        slots = Array(repeating: .free, count: readAhead)
        offsets = Array(repeating: 0, count: readAhead)
        lengths = Array(repeating: 0, count: readAhead)
        generations = Array(repeating: 0, count: readAhead)
        // A cycle until the reader ends and its last read is back (`releaseIfIdle`): it keeps the
        // reader alive while it reads, whoever holds it.
        completions = (0..<readAhead).map { slot in Completion { [self] result in didRead(slot: slot, result) } }
        engine.ioHandles.register(ObjectIdentifier(self)) { [self] in loopIsEnding() }
    }

    // MARK: the consumer's verbs

    /// Starts the reads its buffers allow.
    func start() { issue() }

    /// Stops delivering chunks and starting reads; those in flight complete and wait.
    func pause() { isPaused = true }

    /// Delivers what waits and reads on.
    func resume() {
        guard isPaused else { return }
        isPaused = false
        deliverReady()
    }

    /// Ends the reader without telling its sink; reads in flight complete and are dropped.
    /// Returns whether it was still reading.
    @discardableResult
    func cancel() -> Bool {
        guard !isEnded else { return false }
        isEnded = true
        sink = nil
        releaseIfIdle()
        return true
    }

    /// The consumer took chunks (async face): deliver what waited for room, and read on.
    func consumerTook() {
        guard !isEnded, !isPaused else { return }
        deliverReady()
    }

    // MARK: reading

    private func issue() {
        guard !isEnded, !isPaused, let sink else { return }
        var allowed = readAhead - busy
        while allowed > 0, nextOffset < endOffset {
            let slot = tail
            let length = Int(min(Int64(chunkLength), endOffset - nextOffset))
            do throws(LoopError) {
                try file.read(into: buffers[slot], count: length, offset: nextOffset, completions[slot].call)
            } catch {
                return end(.failure(error))
            }
            slots[slot] = .reading
            offsets[slot] = nextOffset
            lengths[slot] = length
            generations[slot] = generation
            nextOffset += Int64(length)
            tail = tail + 1 == readAhead ? 0 : tail + 1
            busy += 1
            inFlight += 1
            allowed -= 1
        }
        if busy == 0, nextOffset >= endOffset { return end(.success(())) }
        sink.settled(busy: busy)
    }

    private func didRead(slot: Int, _ result: Result<Int, LoopError>) {
        inFlight -= 1
        if isEnded {
            slots[slot] = .free
            return releaseIfIdle()
        }
        slots[slot] = generations[slot] == generation ? .done(result) : .stale
        deliverReady()
    }

    /// Hands the chunks whose turn has come to the sink, in file order, then reads on.
    private func deliverReady() {
        guard !delivering else { return }
        delivering = true
        heldForRoom = false
        deliver: while !isEnded, !isPaused, busy > 0 {
            switch slots[head] {
            case .free, .reading: break deliver
            case .stale: freeHead()
            case .done(.failure(let error)):
                delivering = false
                return end(.failure(error))
            case .done(.success(0)):
                delivering = false
                return end(.success(()))
            case .done(.success(let count)):
                if let reason = file.closeReason {
                    delivering = false
                    return end(.failure(reason))
                }
                guard sink?.chunk(buffers[head]) != false else {
                    heldForRoom = true
                    break deliver
                }
                if count < lengths[head] { restart(after: count) }
                freeHead()
            }
        }
        delivering = false
        if heldForRoom { endIfLoopEnding() }
        issue()
    }

    /// The chunk at `head` is shorter than asked: the reads after it are stale, and reading goes
    /// on from where it ended.
    private func restart(after count: Int) {
        generation &+= 1
        nextOffset = offsets[head] + Int64(count)
        var slot = head
        for _ in 1..<max(busy, 1) {
            slot = slot + 1 == readAhead ? 0 : slot + 1
            if case .done = slots[slot] { slots[slot] = .stale }
        }
    }

    private func freeHead() {
        slots[head] = .free
        head = head + 1 == readAhead ? 0 : head + 1
        busy -= 1
    }

    private func end(_ result: Result<Void, LoopError>) {
        guard !isEnded else { return }
        isEnded = true
        let sink = sink
        self.sink = nil
        releaseIfIdle()
        sink?.end(result)
    }

    /// Once ended with no read in flight: let go of the buffers and break the cycle.
    private func releaseIfIdle() {
        guard isEnded, inFlight == 0, !completions.isEmpty else { return }
        completions = []
        buffers = []
        engine?.ioHandles.unregister(ObjectIdentifier(self))
    }

    /// The loop is ending: reads in flight complete with its refusal and end the reader then; a
    /// reader with none, a paused one (whose completions deliver nothing), or one whose sink has
    /// no room (likewise), ends now, telling its sink without calling user code. Reads still in
    /// flight then only free their slots.
    private func loopIsEnding() {
        engine?.ioHandles.unregister(ObjectIdentifier(self))
        loopEnding = true
        endIfLoopEnding()
    }

    private func endIfLoopEnding() {
        guard loopEnding, inFlight == 0 || isPaused || heldForRoom, !isEnded else { return }
        isEnded = true
        let sink = sink
        self.sink = nil
        releaseIfIdle()
        sink?.loopIsEnding(file.closeReason ?? engine?.lifecycle.refusal ?? .shutDown)
    }
}
