import Synchronization
@testable import UVEvents
@testable import UVLoop
import UVTestSupport

/// The three kinds of event: no argument, a Bool, and another type (here a String).
enum PickerEvent {
    static let reset = EventKey<Void>("reset")
    static let lock = EventKey<Bool>("lock")
    static let pick = EventKey<String>("pick")
}

/// A target that is not `Sendable`: it lives on the loop's thread and records what it was told.
final class Picker {
    let loop: Loop
    private(set) var log: [String] = []
    /// Calls that arrived on a thread other than the loop's.
    private(set) var offLoopCalls = 0

    init(loop: Loop) {
        self.loop = loop
    }

    func reset() { record("reset") }
    func lock(_ locked: Bool) { record("lock(\(locked))") }
    func unlock(_ locked: Bool) { record("unlock(\(locked))") }
    func pick(_ name: String) { record("pick(\(name))") }

    private func record(_ entry: String) {
        if !loop.isOnLoopThread { offLoopCalls += 1 }
        log.append(entry)
    }
}

/// One of a `Picker`'s own methods, registered for the picker event of the same name.
enum PickerAction {
    case reset, lock, pick
}

extension EventRegistry {
    /// Makes `picker` the target and registers its methods for `actions`' events.
    func target(_ picker: Picker, registering actions: PickerAction...) throws {
        try target(picker, registering: actions)
    }

    func target(_ picker: Picker, registering actions: [PickerAction]) throws {
        try setTarget(picker)
        for action in actions {
            switch action {
            case .reset: try register(Picker.reset, for: PickerEvent.reset)
            case .lock: try register(Picker.lock, for: PickerEvent.lock)
            case .pick: try register(Picker.pick, for: PickerEvent.pick)
            }
        }
    }
}

/// Another target class, whose methods a `Picker` does not have.
final class Swatch {
    private(set) var log: [String] = []
    func pick(_ name: String) { log.append("swatch.pick(\(name))") }
}

/// A `Sendable` target, which other threads may hand to a registry or a control.
final class SharedPicker: Sendable {
    let loop: Loop
    let log = Recorder<String>()
    let offLoopCalls = Atomic<Int>(0)

    init(loop: Loop) {
        self.loop = loop
    }

    func reset() { record("reset") }
    func lock(_ locked: Bool) { record("lock(\(locked))") }

    private func record(_ entry: String) {
        if !loop.isOnLoopThread { offLoopCalls.add(1, ordering: .relaxed) }
        log.append(entry)
    }
}

/// One event sent by one of several threads: who sent it, and its place in that thread's sends.
struct Tick: Sendable, Equatable {
    let sender: Int
    let index: Int
}

/// A non-`Sendable` target that records ticks, for the multi-threaded ordering tests.
final class TickRecorder {
    let loop: Loop
    var ticks: [Tick] = []
    var offLoopCalls = 0

    init(loop: Loop) {
        self.loop = loop
    }

    func record(_ tick: Tick) {
        if !loop.isOnLoopThread { offLoopCalls += 1 }
        ticks.append(tick)
    }
}

/// Whether, for each sender, its ticks appear in sending order 0..<perSender and none is missing.
func ticksArriveInPerSenderOrder(_ ticks: [Tick], senders: Int, perSender: Int) -> Bool {
    var next = [Int](repeating: 0, count: senders)
    for tick in ticks {
        guard tick.index == next[tick.sender] else { return false }
        next[tick.sender] += 1
    }
    return next.allSatisfy { $0 == perSender }
}
