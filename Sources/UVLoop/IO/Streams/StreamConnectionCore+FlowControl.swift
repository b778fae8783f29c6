/// A close that waits for the queued writes (see `StreamConnectionCore.closeAfterFlushing`).
/// Loop thread only.
final class FlushingClose {
    /// The deadline's timer; cancelled when the close happens first.
    var timer: LoopTimer?
    /// Once flushed: closes when the peer has sent nothing for `lingerTime` (a peer that does
    /// not end its side is not waited for until the deadline).
    var lingerTimer: LoopTimer?
    static let lingerTime = Duration.seconds(1)
    /// Told, once closed, whether every queued byte was handed to the kernel first.
    var completions: [(Bool) -> Void] = []
    /// The half-close that flushes the queue has completed (or was not needed).
    var writesFlushed = false
    /// The half-close is this close's own (not one the user asked for before).
    var ownsShutdown = false
    /// The peer has ended its side (or reading failed): nothing more to drain.
    var peerEnded = false
}

/// Reading that follows the write queue, closing after flushing, and the hooks of pipes and
/// draining listeners. Loop thread only.
extension StreamConnectionCore {
    // MARK: reading that follows the write queue

    /// Whether reads reach the read handler: the user wants them, no write queue holds them
    /// back, and the connection is open.
    var deliversReads: Bool { wantsReading && !readingPausedForWrites && isOpen && flushingClose == nil }

    /// The user's `startReading`: resumes reading unless the write queue holds it back.
    func userStartsReading() -> LoopError? {
        wantsReading = true
        if readingPausedForWrites { return nil }
        return restartReading()
    }

    /// The user's `stopReading`: the user takes control until the next `startReading`.
    func userStopsReading() {
        wantsReading = false
        readingPausedForWrites = false
        pauseReading()
    }

    /// Resumes reading: through the framed reader when there is one (it delivers what it kept
    /// first), else libuv's reading.
    @discardableResult
    func restartReading() -> LoopError? {
        if let readResumer {
            readResumer(self)
            return nil
        }
        return resumeReading()
    }

    /// A write made by the read handler (an answer) left the queue above the high-water mark:
    /// pause reading if asked to. Writes made elsewhere (a client's own requests) do not pause
    /// it, so that a peer that answers cannot make both sides wait for each other.
    func answersAreBackedUp() {
        guard pausesReadingWhileUnwritable, readMode == .callback, wantsReading, !readingPausedForWrites,
              outgoingPipe == nil else { return }
        readingPausedForWrites = true
        pauseReading()
    }

    /// The queue drained to the low-water mark: resume the reading it paused, here and in the
    /// connection that pipes into this one.
    func didBecomeWritable() {
        if readingPausedForWrites, outgoingPipe == nil { resumeAfterWritePause() }
        incomingPipe?.destinationIsWritable()
    }

    /// Resumes reading that a write queue paused.
    func resumeAfterWritePause() {
        guard readingPausedForWrites else { return }
        readingPausedForWrites = false
        guard wantsReading, isOpen else { return }
        if let error = restartReading(), let handler = readHandler, let connection {
            handler(connection, .failed(error))
        }
    }

    // MARK: closing after flushing

    /// Closes once every queued write is handed to the kernel and the peer has ended its side
    /// or gone quiet (or at `deadline`, whatever is left): stops delivering reads, half-closes,
    /// and discards what the peer still sends, so that the kernel does not reset the connection
    /// over unread bytes and drop the reply on its way.
    func closeAfterFlushing(within deadline: Duration, _ completion: ((Bool) -> Void)?) {
        // What tasks wrote goes into the flush.
        if isOpen { flushAsyncWrites() }
        guard isOpen else {
            completion?(queuedWriteBytes == 0)
            return
        }
        if let flushing = flushingClose {
            if let completion { flushing.completions.append(completion) }
            return
        }
        let flushing = FlushingClose()
        if let completion { flushing.completions.append(completion) }
        flushingClose = flushing
        // Pipes out of and into this connection stop (leaving the other side open), and reads
        // are discarded from now on: none reaches a handler or a task.
        outgoingPipe?.finish(.streamClosed, closing: false)
        incomingPipe?.finish(.streamClosed, closing: false)
        readHandler = nil
        readResumer = nil
        readMode = .idle
        asyncState?.discardReads(.streamClosed)
        readingPausedForWrites = false
        if readHasEnded { flushing.peerEnded = true } else if resumeReading() != nil { flushing.peerEnded = true }
        if !writesShutDown {
            flushing.ownsShutdown = true
            do throws(LoopError) {
                try shutdownWrites { [self] error in
                    flushingClose?.writesFlushed = error == nil
                    if error != nil { flushingClose?.peerEnded = true }
                    finishFlushingClose()
                }
            } catch {
                flushing.writesFlushed = true
                flushing.peerEnded = true
            }
        }
        let box = LoopConfinedObject(self)
        flushing.timer = try? loop.schedule(after: deadline) { box.value.flushingCloseDeadlineHasPassed() }
        finishFlushingClose()
    }

    /// Closes if the flush and the peer's end are both done; once flushed, lingers for the
    /// peer's end while it still sends.
    func finishFlushingClose() {
        guard let flushing = flushingClose, isOpen else { return }
        if flushing.ownsShutdown ? !flushing.writesFlushed : queuedWriteBytes > 0 { return }
        if !flushing.peerEnded, !readHasEnded {
            if flushing.lingerTimer == nil {
                let box = LoopConfinedObject(self)
                flushing.lingerTimer = try? loop.schedule(after: FlushingClose.lingerTime) { box.value.flushingCloseDeadlineHasPassed() }
            }
            return
        }
        close(reason: .streamClosed)
    }

    /// The peer still sends while a flushing close lingers: give it more time to end.
    func flushingCloseDiscardedARead() {
        _ = flushingClose?.lingerTimer?.reschedule(after: FlushingClose.lingerTime)
    }

    private func flushingCloseDeadlineHasPassed() {
        guard flushingClose != nil, isOpen else { return }
        close(reason: .streamClosed)
    }

    /// The close hook: ends a flushing close (telling whether it flushed, from a later callback:
    /// this runs where no user code may) and tells the accepting listener.
    func closedForFlowControl() {
        readingPausedForWrites = false
        guard let flushing = flushingClose else { return }
        flushing.timer?.cancel()
        flushing.timer = nil
        flushing.lingerTimer?.cancel()
        flushing.lingerTimer = nil
        let flushed = flushing.ownsShutdown ? flushing.writesFlushed : queuedWriteBytes == 0
        let completions = flushing.completions
        flushing.completions.removeAll()
        guard !completions.isEmpty else { return }
        let box = LoopConfinedObject(CompletionList(completions))
        if (try? loop.post { box.value.run(flushed) }) == nil {
            // The loop is ending: it posts nothing more, so the completions run from the close
            // callback instead.
            pendingFlushCompletions = (box.value, flushed)
        }
    }

    // MARK: pipes

    /// Ends the pipes into and out of this connection, which has closed.
    func endPipes(reason: LoopError) {
        if let (list, flushed) = pendingFlushCompletions {
            pendingFlushCompletions = nil
            list.run(flushed)
        }
        incomingPipe?.finish(reason)
        outgoingPipe?.finish(reason)
        acceptingListener?.connectionDidClose(self)
        acceptingListener = nil
    }
}

/// Completions to run later, as one object a posted job can carry.
final class CompletionList {
    private var completions: [(Bool) -> Void]

    init(_ completions: [(Bool) -> Void]) { self.completions = completions }

    func run(_ value: Bool) {
        let list = completions
        completions.removeAll()
        for completion in list { completion(value) }
    }
}
