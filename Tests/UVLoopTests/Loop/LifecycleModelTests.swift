import CLibUV
import Glibc
import Synchronization
import UVTestSupport
import XCTest

@testable import UVLoop

/// Random sequences of post, invoke, timer start, handle open, stop, shutdown and detach, made by
/// several threads at once, checked against a reference model of the loop's phases. Each run is
/// seeded: a failure names its seed, and `run(seed:attached:)` replays it.
final class LifecycleModelTests: XCTestCase {
    func testRandomSequencesOnOwnedLoops() throws {
        try runSeeds(0..<24, attached: false)
    }

    func testRandomSequencesOnAttachedLoops() throws {
        try runSeeds(100..<124, attached: true)
    }

    /// One run per seed; together the runs must exercise both sides of the ending.
    private func runSeeds(_ seeds: Range<UInt64>, attached: Bool) throws {
        var totals = (accepted: 0, refused: 0)
        for seed in seeds {
            let counts = try run(seed: seed, attached: attached)
            totals = (totals.accepted + counts.accepted, totals.refused + counts.refused)
        }
        XCTAssertGreaterThan(totals.accepted, 500)
        XCTAssertGreaterThan(totals.refused, 200)
    }

    /// One run: `workers` threads each make `operations` random calls on one loop; one of the
    /// calls (at a random point of a random worker) ends the loop, unless none comes up, in which
    /// case the test ends it afterwards.
    @discardableResult
    private func run(
        seed: UInt64, attached: Bool, workers: Int = 3, operations: Int = 40
    ) throws -> (accepted: Int, refused: Int) {
        let host = ModelLoopHost(attached: attached)
        let loop = host.loop
        let model = LifecycleModel()
        var planner = SplitMix64(state: seed)
        let plans = (0..<workers).map { _ in
            (0..<operations).map { _ in ModelOperation.random(using: &planner, attached: attached) }
        }
        onThreads(workers) { worker in
            for (index, operation) in plans[worker].enumerated() {
                model.perform(operation, id: worker * 1_000 + index, on: loop)
            }
        }
        if model.phase == .open { model.end(loop, attached: attached) }
        host.join()

        let context = "seed \(seed) (\(attached ? "attached" : "owned")); replay with run(seed: \(seed), attached: \(attached))"
        for violation in model.violations() { XCTFail("\(violation); \(context)") }
        XCTAssertEqual(host.closeStatus, 0, "uv_loop_close after the ending; \(context)")
        XCTAssertTrue(loop.engine.ioHandles.isEmpty, "every handle closed; \(context)")
        for watch in model.watches { XCTAssertFalse(watch.isActive, "a watch outlived the loop; \(context)") }
        return model.counts
    }
}

/// What a worker does in one step.
private enum ModelOperation: Sendable {
    case post, postNextIteration, invoke, schedule, openHandle, stop, end
    /// From the loop's thread (inside an invoke): a post, next-iteration work, a timer or a handle.
    indirect case onLoopThread(ModelOperation)

    static func random(using generator: inout SplitMix64, attached: Bool) -> ModelOperation {
        let draw = generator.next() % 100
        if draw < 20 { return .onLoopThread([.post, .postNextIteration, .schedule, .openHandle][Int(draw % 4)]) }
        return switch generator.next() % 100 {
        case 0..<30: .post
        case 30..<40: .postNextIteration
        case 40..<55: .invoke
        case 55..<75: .schedule
        case 75..<87: .openHandle
        case 87..<99: .stop
        default: .end
        }
    }
}

/// The reference model: the loop is open until a call that ends it (shutdown, or detach on the
/// loop's thread) has returned; from then on every call must be refused. Work that was accepted
/// runs exactly once (posts, next-iteration work, invokes) or at most once (timers, which the
/// ending may cancel); refused work never runs.
private final class LifecycleModel: Sendable {
    enum Phase { case open, ended }

    private struct State {
        var phase = Phase.open
        var accepted: [Int: ModelOperation] = [:]
        var refused: Set<Int> = []
        var ran: [Int: Int] = [:]
        var refusedWhileOpen = 0
        var acceptedAfterEnd: [Int] = []
        var wrongErrors: [String] = []
        var invokesNotRun: [Int] = []
        var watches: [DescriptorWatch] = []
        var timers: [LoopTimer] = []
        var pipes: [Int32] = []
    }

    private let state = NativeMutex(State())

    var phase: Phase { state.withLock { $0.phase } }
    var watches: [DescriptorWatch] { state.withLock { $0.watches } }
    var counts: (accepted: Int, refused: Int) { state.withLock { ($0.accepted.count, $0.refused.count) } }

    deinit {
        for descriptor in state.withLock({ $0.pipes }) { close(descriptor) }
    }

    func perform(_ operation: ModelOperation, id: Int, on loop: Loop) {
        let endedBefore = phase == .ended
        do {
            switch operation {
            case .post:
                try loop.post { [self] in ran(id) }
            case .postNextIteration:
                try loop.postNextIteration { [self] in ran(id) }
            case .invoke:
                let value = try loop.invoke { [self] in
                    ran(id)
                    return id
                }
                if value != id || runs(of: id) != 1 { state.withLock { $0.invokesNotRun.append(id) } }
            case .schedule:
                let timer = try loop.schedule(after: .zero) { [self] in ran(id) }
                state.withLock { $0.timers.append(timer) }
            case .openHandle:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { return }
                state.withLock { $0.pipes += ends }
                let watch = try loop.watchDescriptor(ends[0], for: .readable) { _, _ in }
                state.withLock { $0.watches.append(watch) }
            case .stop:
                loop.stop()
                return
            case .end:
                end(loop, attached: loop.isAttached)
                return
            case .onLoopThread(let inner):
                // The invoke is accepted or refused like any; the inner call, made on the loop's
                // thread, is checked on its own (under another id).
                try loop.invoke { [self] in perform(inner, id: id + 500, on: loop) }
                return
            }
            state.withLock { state in
                state.accepted[id] = operation
                if endedBefore { state.acceptedAfterEnd.append(id) }
            }
        } catch {
            state.withLock { state in
                state.refused.insert(id)
                if error != loop.lifecycle.refusal { state.wrongErrors.append("\(operation) \(id): \(error)") }
                if !endedBefore, loop.isAcceptingWork { state.refusedWhileOpen += 1 }
            }
        }
    }

    /// Ends the loop the way its kind ends (shutdown, or detach on its own thread) and moves the
    /// model to `ended` once that call has returned.
    func end(_ loop: Loop, attached: Bool) {
        if attached {
            _ = try? loop.invoke { loop.detach() }
        } else {
            loop.shutdown()
        }
        state.withLock { $0.phase = .ended }
    }

    private func ran(_ id: Int) {
        state.withLock { $0.ran[id, default: 0] += 1 }
    }

    private func runs(of id: Int) -> Int { state.withLock { $0.ran[id] ?? 0 } }

    /// The invariants, checked once the loop has finished ending.
    func violations() -> [String] {
        state.withLock { state in
            var found: [String] = []
            for timer in state.timers where timer.isPending { found.append("a timer outlived the loop's ending") }
            for (id, count) in state.ran where count > 1 { found.append("work \(id) ran \(count) times") }
            for id in state.refused where state.ran[id] != nil { found.append("refused work \(id) ran") }
            for (id, operation) in state.accepted {
                switch operation {
                case .post, .postNextIteration, .invoke:
                    if state.ran[id] != 1 { found.append("accepted \(operation) \(id) was lost") }
                default: break
                }
            }
            if !state.acceptedAfterEnd.isEmpty { found.append("accepted after the ending returned: \(state.acceptedAfterEnd)") }
            if state.refusedWhileOpen > 0 { found.append("\(state.refusedWhileOpen) calls refused while the loop was open") }
            if !state.invokesNotRun.isEmpty { found.append("invokes returned without running: \(state.invokesNotRun)") }
            found += state.wrongErrors.map { "refused with another error than the loop's refusal: \($0)" }
            return found
        }
    }
}

/// A loop created and run by a thread of its own: owned (run again after each `stop()`, until
/// shut down) or attached to a C loop (run with `uv_run` until detached, then closed).
private final class ModelLoopHost: Sendable {
    let loop: Loop
    private let thread: JoinableThread
    private let status = NativeMutex<Int32?>(nil)

    init(attached: Bool) {
        let created = NativeMutex<Loop?>(nil)
        let ready = Gate()
        let status = self.status
        thread = JoinableThread {
            if attached {
                let cLoop = makeCLoop()
                let loop = try! Loop.attach(cLoop)
                try! loop.setKeepsOwnerLoopAlive(true)
                created.withLock { $0 = loop }
                ready.open()
                while !loop.lifecycle.handlesClosed { uv_run(cLoop, UV_RUN_DEFAULT) }
                uv_run(cLoop, UV_RUN_NOWAIT)
                status.withLock { $0 = uv_loop_close(cLoop) }
                cLoop.deallocate()
            } else {
                let loop = try! Loop()
                created.withLock { $0 = loop }
                ready.open()
                // `run()` returns after each stop() and throws once the loop is shut down; its
                // last return closed the uv_loop_t (a failure to close stops the program).
                while (try? loop.run()) != nil {}
                status.withLock { $0 = 0 }
            }
        }
        _ = ready.pass()
        loop = created.withLock { $0! }
    }

    /// Waits for the loop's thread: it ends once the loop has.
    func join() { thread.join() }

    /// What `uv_loop_close` returned (0 for an owned loop whose last `run()` closed it).
    var closeStatus: Int32? { status.withLock { $0 } }
}
