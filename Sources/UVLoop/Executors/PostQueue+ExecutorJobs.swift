/// Where an executor job goes when it reaches the post queue.
enum JobAdmission {
    /// Queued; the loop is already awake or was just woken.
    case queued
    /// The loop has closed and no thread is running late jobs: the caller runs this one and any
    /// that arrive meanwhile (see `Loop.runLateJobs(startingWith:)`).
    case runHere
}

/// An executor job that reached a closed loop, with the executor it must run on.
enum LateJob: Sendable {
    case actor(UnownedJob, UnownedSerialExecutor)
    case task(UnownedJob, UnownedTaskExecutor)

    func run() {
        switch self {
        case .actor(let job, let executor): job.runSynchronously(on: executor)
        case .task(let job, let executor): job.runSynchronously(on: executor)
        }
    }
}

extension PostQueue {
    /// Admits a Swift concurrency job. `SerialExecutor.enqueue` cannot throw, so unlike a post a
    /// job is never refused:
    /// - open: appended like a post (a wake-up only if the loop may be asleep);
    /// - shutting down: appended without a wake; the shutdown drain runs it before the loop closes
    ///   (shutdown already woke the loop, and a wake could reach a handle being closed);
    /// - closed or detached: handed to the late runner, or the caller becomes it.
    @inline(__always)
    func admit(_ job: Job, late: @autoclosure () -> LateJob, waking: WakeHandle) -> JobAdmission {
        // `mustWake`: a wake-up was registered in `wakersInFlight`; it is sent after unlocking.
        let (admission, mustWake) = state.withLock { state -> (JobAdmission, Bool) in
            switch state.phase {
            case .open:
                state.jobs.append(job)
                if state.wakePending { return (.queued, false) }
                state.wakePending = true
                wakersInFlight.add(1, ordering: .relaxed)
                return (.queued, true)
            case .shuttingDown:
                state.jobs.append(job)
                return (.queued, false)
            case .closed, .detached:
                if state.lateRunner != nil {
                    state.lateJobs.append(late())
                    return (.queued, false)
                }
                state.lateRunner = .current
                return (.runHere, false)
            }
        }
        if mustWake { sendRegisteredWake(waking) }
        return admission
    }

    /// The late runner's next batch, swapped into `buffer` (which must be empty); when there is
    /// none, the caller stops being the late runner and this returns false.
    func takeLateJobs(into buffer: inout [LateJob]) -> Bool {
        state.withLock { state in
            if state.lateJobs.isEmpty {
                state.lateRunner = nil
                return false
            }
            swap(&state.lateJobs, &buffer)
            return true
        }
    }

    /// Ends shutdown if no job is left: sets `phase` in the same lock that saw the queue empty, so
    /// a job admitted concurrently is either drained by the loop or handled as late, never neither.
    func close(as phase: LoopPhase) -> Bool {
        state.withLock { state in
            guard state.jobs.isEmpty else { return false }
            state.phase = phase
            return true
        }
    }
}
