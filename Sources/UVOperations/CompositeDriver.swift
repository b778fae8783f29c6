import UVLoop

/// Runs one start of a composite: starts its children, collects their outcomes, and completes
/// the composite's request once every child has completed. Loop thread only.
///
/// The driver keeps its request alive (children hold the driver through their finish callbacks)
/// until it completes it; then it lets go, which breaks the request-driver cycle.
final class CompositeDriver<Value: Sendable>: Sendable {
    private let loop: Loop
    private let plan: CompositePlan
    private let wrap: @Sendable (CompositeResults) -> Value
    private let state: LoopBound<State>

    private struct State {
        /// Set by `begin`, cleared by `complete`.
        var request: OperationRequest<Value>?
        var begun = false
        var cancelled = false
        /// Sequence: the next child to consider.
        var nextChild = 0
        /// Concurrent: children not completed yet.
        var unfinished = 0
        /// Children started and not completed, by index: what a cancel reaches.
        var running: [Int: any CancellableRequest] = [:]
        var outcomes: [Outcome<any Sendable>?]
    }

    init(loop: Loop, plan: CompositePlan, wrap: @escaping @Sendable (CompositeResults) -> Value) {
        self.loop = loop
        self.plan = plan
        self.wrap = wrap
        self.state = LoopBound(State(outcomes: Array(repeating: nil, count: plan.children.count)), loop: loop)
    }

    /// Starts the children. A request cancelled before this point completes every child
    /// without running it.
    func begin(_ request: OperationRequest<Value>) {
        let cancelled = request.isCancelled
        state.withValue { state in
            state.request = request
            state.begun = true
            state.cancelled = cancelled
            state.unfinished = plan.children.count
        }
        switch plan.mode {
        case .sequence:
            advance()
        case .concurrent:
            if plan.children.isEmpty { return complete() }
            for index in plan.children.indices {
                if cancelled {
                    childFinished(index, plan.children[index].skip(.cancelled))
                } else {
                    start(child: index)
                }
            }
        }
    }

    /// Cancels the running children; a sequence then skips the rest. Before `begin`, the
    /// request's cancelled flag tells `begin` instead.
    func cancel() {
        let running: [any CancellableRequest] = state.withValue { state in
            guard state.begun, state.request != nil, !state.cancelled else { return [] }
            state.cancelled = true
            return Array(state.running.values)
        }
        // Outside `withValue`: cancelling may call back into this driver.
        for child in running { child.cancel() }
    }

    /// Sequence: starts the next child, or completes the skipped ones and the composite.
    private func advance() {
        while true {
            let (index, cancelled) = state.withValue { state in
                defer { state.nextChild += 1 }
                return (state.nextChild, state.cancelled)
            }
            guard index < plan.children.count else { return complete() }
            if cancelled {
                record(index, plan.children[index].skip(.cancelled))
                continue
            }
            do {
                let child = try plan.children[index].startChild(on: loop) { [self] outcome in
                    childFinished(index, outcome)
                }
                state.withValue { $0.running[index] = child }
                return
            } catch {
                record(index, plan.children[index].skip(.refused(error)))
            }
        }
    }

    /// Concurrent: starts one child; a loop that refuses it completes the child with the error.
    private func start(child index: Int) {
        do {
            let child = try plan.children[index].startChild(on: loop) { [self] outcome in
                childFinished(index, outcome)
            }
            state.withValue { $0.running[index] = child }
        } catch {
            childFinished(index, plan.children[index].skip(.refused(error)))
        }
    }

    private func record(_ index: Int, _ outcome: Outcome<any Sendable>) {
        state.withValue { state in
            state.outcomes[index] = outcome
            state.running[index] = nil
        }
    }

    private func childFinished(_ index: Int, _ outcome: Outcome<any Sendable>) {
        record(index, outcome)
        switch plan.mode {
        case .sequence:
            advance()
        case .concurrent:
            let done = state.withValue { state in
                state.unfinished -= 1
                return state.unfinished == 0
            }
            if done { complete() }
        }
    }

    private func complete() {
        let (request, outcomes) = state.withValue { state in
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
