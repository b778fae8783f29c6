import UVLoop

/// Runs one start of a composite: starts its children on the loop's thread, collects their
/// outcomes, and completes the composite's request once every child has completed.
///
/// `cancel()` may come from any thread and reaches the running children at once, so a child
/// running when the composite is cancelled always finishes with the cancelled flag. A child is
/// either started before the cancel (then the cancel finds it in `running`, or the starter sees
/// the flag right after registering it and cancels it) or after (then it is skipped).
///
/// The driver keeps its request alive (children hold the driver through their finish callbacks)
/// until it completes it; then it lets go, which breaks the request-driver cycle.
@usableFromInline
final class CompositeDriver<Value: Sendable>: Sendable {
    private let loop: Loop
    private let plan: CompositePlan
    private let wrap: @Sendable (CompositeResults) -> Value
    private let state: AnnotatedMutex<State>

    private struct State {
        /// Set by `begin`, cleared by `complete`.
        var request: OperationRequest<Value>?
        var cancelled = false
        /// Sequence: the next child to consider.
        var nextChild = 0
        /// Concurrent: children not completed yet.
        var unfinished = 0
        /// Children started and not completed, by index: what a cancel reaches.
        var running: [Int: any CancellableRequest] = [:]
        var outcomes: [Outcome<any Sendable>?]
    }

    @usableFromInline
    init(loop: Loop, plan: CompositePlan, wrap: @escaping @Sendable (CompositeResults) -> Value) {
        self.loop = loop
        self.plan = plan
        self.wrap = wrap
        self.state = AnnotatedMutex(State(outcomes: Array(repeating: nil, count: plan.children.count)))
    }

    /// Loop thread: starts the children. A composite cancelled before this point completes every
    /// child without running it.
    func begin(_ request: OperationRequest<Value>) {
        let count = plan.children.count
        state.withLock { state in
            state.request = request
            state.unfinished = count
        }
        switch plan.mode {
        case .sequence:
            advance()
        case .concurrent:
            if count == 0 { return complete() }
            for index in plan.children.indices {
                if isCancelled {
                    childFinished(index, plan.children[index].skip(.cancelled))
                } else {
                    start(child: index)
                }
            }
        }
    }

    /// Any thread: cancels the running children; the children not started yet will be skipped.
    func cancel() {
        let running: [any CancellableRequest] = state.withLock { state in
            state.cancelled = true
            return Array(state.running.values)
        }
        // Outside the lock: cancelling a child may call back into this driver.
        for child in running { child.cancel() }
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Sequence: starts the next child, or completes the skipped ones and the composite.
    private func advance() {
        while true {
            let (index, cancelled) = state.withLock { state in
                defer { state.nextChild += 1 }
                return (state.nextChild, state.cancelled)
            }
            guard index < plan.children.count else { return complete() }
            if cancelled {
                record(index, plan.children[index].skip(.cancelled))
            } else if start(child: index) {
                return
            }
        }
    }

    /// Starts one child and registers it for cancels. A loop that refuses it completes the child
    /// with the error (recorded only; the caller moves on). Returns whether the child started.
    @discardableResult
    private func start(child index: Int) -> Bool {
        let child: any CancellableRequest
        do {
            child = try plan.children[index].startChild(on: loop) { [self] outcome in
                childFinished(index, outcome)
            }
        } catch {
            let outcome = plan.children[index].skip(.refused(error))
            if plan.mode == .concurrent { childFinished(index, outcome) } else { record(index, outcome) }
            return false
        }
        let cancelledMeanwhile = state.withLock { state in
            state.running[index] = child
            return state.cancelled
        }
        if cancelledMeanwhile { child.cancel() }
        return true
    }

    private func record(_ index: Int, _ outcome: Outcome<any Sendable>) {
        state.withLock { state in
            state.outcomes[index] = outcome
            state.running[index] = nil
        }
    }

    /// Loop thread: a child completed.
    private func childFinished(_ index: Int, _ outcome: Outcome<any Sendable>) {
        switch plan.mode {
        case .sequence:
            record(index, outcome)
            advance()
        case .concurrent:
            let done = state.withLock { state in
                state.outcomes[index] = outcome
                state.running[index] = nil
                state.unfinished -= 1
                return state.unfinished == 0
            }
            if done { complete() }
        }
    }

    private func complete() {
        let (request, outcomes) = state.withLock { state in
            defer { state.request = nil }
            return (state.request, state.outcomes)
        }
        guard let request else { return }
        var names: [String] = []
        var named: [String: Outcome<any Sendable>] = [:]
        for (child, outcome) in zip(plan.children, outcomes) {
            guard let name = child.name, let outcome else { continue }
            names.append(name)
            named[name] = outcome
        }
        request.finishComposite(with: .success(wrap(CompositeResults(names: names, outcomes: named))))
    }
}
