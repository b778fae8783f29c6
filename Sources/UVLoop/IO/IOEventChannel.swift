/// Where an I/O watch's events wait for the one task that iterates its `AsyncSequence` face
/// (``SignalDeliveries``, ``DescriptorReadiness``): at most one waiting consumer and at most one
/// kept element, into which events that arrive while the consumer is busy are merged. So a slow
/// consumer never makes events pile up, and none is dropped without a trace.
///
/// The loop's thread delivers and finishes; the consumer's task waits. A failure (descriptor
/// watches only) is reported once, after the kept element, and ends the sequence.
final class IOEventChannel<Element: Sendable>: Sendable {
    private struct State {
        var waiter: CheckedContinuation<Result<Element, LoopError>?, Never>?
        var pending: Element?
        var failure: LoopError?
        var finished = false
    }

    private let state = NativeMutex(State())
    private let merge: @Sendable (Element, Element) -> Element

    init(merge: @escaping @Sendable (Element, Element) -> Element) {
        self.merge = merge
    }

    /// Whether a consumer waits for an element now.
    var hasWaiter: Bool { state.withLock { $0.waiter != nil } }

    /// Hands `element` to the waiting consumer, or keeps it (merged with what is kept) for the
    /// next call to `next`. Ignored once finished.
    func deliver(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Element, LoopError>?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = state.pending.map { merge($0, element) } ?? element
            return nil
        }
        waiter?.resume(returning: .success(element))
    }

    /// Ends the sequence, after the kept element, with `failure` if given (reported once), then
    /// `nil`. Idempotent; any thread.
    func finish(failing failure: LoopError? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Element, LoopError>?, Never>? in
            guard !state.finished else { return nil }
            state.finished = true
            // A waiting consumer has nothing kept (it would not wait): it gets the failure now.
            state.failure = state.waiter == nil ? failure : nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: failure.map { .failure($0) })
    }

    /// The next element, or its failure, or `nil` once finished. `willWait` runs (outside the
    /// lock) when the consumer begins to wait; `onCancel` when its task is cancelled. Waits on the
    /// caller's actor (`isolation`), so a consumer on the loop stays on it.
    func next(
        isolation: isolated (any Actor)?, willWait: @Sendable () -> Void, onCancel: @Sendable () -> Void
    ) async -> Result<Element, LoopError>? {
        await withTaskCancellationHandler {
            _ = isolation
            return await withCheckedContinuation { (continuation: CheckedContinuation<Result<Element, LoopError>?, Never>) in
                let ready = state.withLock { state -> Result<Element, LoopError>?? in
                    if let element = state.pending {
                        state.pending = nil
                        return .some(.success(element))
                    }
                    if state.finished {
                        defer { state.failure = nil }
                        return .some(state.failure.map { .failure($0) })
                    }
                    misusePrecondition(state.waiter == nil, "UVLoop: two tasks called next() on one iterator of an I/O watch at once")
                    state.waiter = continuation
                    return .none
                }
                if case .some(let value) = ready {
                    continuation.resume(returning: value)
                } else {
                    willWait()
                }
            }
        } onCancel: {
            onCancel()
        }
    }
}
