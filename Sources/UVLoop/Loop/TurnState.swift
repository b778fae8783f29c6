/// What the loop's thread reads and changes on every turn: the drained batch, the requests for
/// a drain, the busy-poll window, the next-iteration queues and whether timers are due.
///
/// `LoopEngine` keeps it in `HeapStorage` and reaches each field through a computed property of
/// the same name: as stored `var`s of the class, each access would pay a run-time exclusivity
/// check (several per turn: `updateHandles`, `onIdle`, the turn's accounting). That is safe
/// because no access to a field is held across a call into user code: the drain and the
/// next-iteration run swap their queue into a local first and back afterwards, and the other
/// fields are read or written in single statements.
struct TurnState {
    /// The consumer's batch: swapped out of the post queue, run from `batchIndex` on.
    var batch: [Job] = []
    var batchIndex = 0
    /// A drain must happen without waiting for the wake handle (a loop-thread executor job
    /// found the wake flag clear, or a drain consumed a wake-up without looking at the queue).
    var drainRequested = false
    /// Until when (monotonic nanoseconds) the loop polls without blocking, after a drain that ran
    /// work (`Loop.busyPoll`); zero when it does not.
    var busyPollUntil: UInt64 = 0
    /// Stored as `Job`s, not as bare closures: an array of closures keeps them at the generic
    /// abstraction, and converting each one to it allocates a thunk (a second allocation per post).
    var nextIteration: [Job] = []
    var nextIterationSnapshot: [Job] = []
    /// The earliest timer was due when last looked at: fire it from the idle phase.
    var timersDue = false
}

extension LoopEngine {
    var batch: [Job] {
        _read { yield turnStorage.value.batch }
        _modify { yield &turnStorage.value.batch }
    }

    var batchIndex: Int {
        _read { yield turnStorage.value.batchIndex }
        _modify { yield &turnStorage.value.batchIndex }
    }

    var drainRequested: Bool {
        _read { yield turnStorage.value.drainRequested }
        _modify { yield &turnStorage.value.drainRequested }
    }

    var busyPollUntil: UInt64 {
        _read { yield turnStorage.value.busyPollUntil }
        _modify { yield &turnStorage.value.busyPollUntil }
    }

    var nextIteration: [Job] {
        _read { yield turnStorage.value.nextIteration }
        _modify { yield &turnStorage.value.nextIteration }
    }

    var nextIterationSnapshot: [Job] {
        _read { yield turnStorage.value.nextIterationSnapshot }
        _modify { yield &turnStorage.value.nextIterationSnapshot }
    }

    var timersDue: Bool {
        _read { yield turnStorage.value.timersDue }
        _modify { yield &turnStorage.value.timersDue }
    }
}
