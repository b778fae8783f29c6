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
    /// Admits a Swift concurrency job (see `LoopLifecycle.admitExecutorJob`): never refused.
    @inline(__always)
    func admit(_ job: Job, late: @autoclosure () -> LateJob, waking: WakeHandle) -> JobAdmission {
        lifecycle.admitExecutorJob(job, late: late, waking: waking)
    }

    /// The late runner's next batch, swapped into `buffer` (which must be empty); when there is
    /// none, the caller stops being the late runner and this returns false.
    func takeLateJobs(into buffer: inout [LateJob]) -> Bool {
        lifecycle.withGuarded { state in
            if state.lateJobs.isEmpty {
                state.lateRunner = nil
                return false
            }
            swap(&state.lateJobs, &buffer)
            return true
        }
    }
}
