import UVEvents
import UVLoop

/// A custom control's events: one event key for each kind of argument.
enum ColorPickerEvent {
    static let none = EventKey<Void>("noneEventKey")
    static let flag = EventKey<Bool>("booleanEventKey")
    static let object = EventKey<String>("objectEventKey")
}

/// The handler: an ordinary (non-Sendable) class living on the loop's thread.
final class ColorPickerHandler {
    let name: String
    init(name: String) { self.name = name }
    func onNone() { print("    \(name).onNone()") }
    func onFlag(_ flag: Bool) { print("    \(name).onFlag(\(flag))") }
    func onObject(_ text: String) { print("    \(name).onObject(\"\(text)\")") }
}

/// Two unrelated classes listening to the same slider event (the UIControl shape).
final class ValueLabel {
    func show(_ value: Int) { print("    label shows \(value)") }
}

final class ValueLog {
    func record(_ value: Int) { print("    log records \(value)") }
}

/// Narrates the event registry: typed keys, unbound method references as actions, inline and
/// posted sends, a weak target, and several (target, action) pairs per event.
func runEventsSection() throws {
    print("== Events: call a method of an object chosen at run time, keyed by event")
    let loop = try Loop()
    defer { loop.shutdown() }

    let handler = ColorPickerHandler(name: "handler")
    let control = EventRegistry(loop: loop)
    try control.setTarget(handler)
    try control.register(ColorPickerHandler.onNone, for: ColorPickerEvent.none)
    try control.register(ColorPickerHandler.onFlag, for: ColorPickerEvent.flag)
    try control.register(ColorPickerHandler.onObject, for: ColorPickerEvent.object)
    print("  target set (held weakly), three actions registered as unbound method references")

    print("  on the loop's thread, sends run inline:")
    try control.send(ColorPickerEvent.none)
    try control.send(ColorPickerEvent.flag, true)
    try control.send(ColorPickerEvent.object, "something")
    print("  (control.send(ColorPickerEvent.flag, \"yes\") would not compile: the key carries a Bool)")

    let worker = try Loop.startThread(name: "events-worker")
    let posted = try worker.loop.invoke { try control.send(ColorPickerEvent.flag, false) }
    let unregistered = try worker.loop.invoke { try control.send(EventKey<Int>("unknown"), 1) }
    print("  from a worker thread: send(flag) returned \(posted) (an action was registered), an unknown key \(unregistered)")
    print("  the posted send runs when the loop turns, on the loop's thread:")
    try loop.runUntilIdle()
    worker.shutdown()
    // The registry holds its target weakly: whoever owns the handler keeps it alive (here, this
    // function, until this point).
    withExtendedLifetime(handler) {}

    try withExtendedLifetime(ColorPickerHandler(name: "replacement")) { replacement in
        try control.setTarget(replacement)
        print("  a different target clears every action: send(none) returns \(try control.send(ColorPickerEvent.none))")
        try control.register(ColorPickerHandler.onNone, for: ColorPickerEvent.none)
        try control.send(ColorPickerEvent.none)
    }
    print("  the replacement is gone: send(none) returns \(try control.send(ColorPickerEvent.none)), and nothing crashes")

    print("  several (target, action) pairs per event run in the order they were added:")
    let valueChanged = EventKey<Int>("valueChanged")
    let slider = EventControl(loop: loop)
    let label = ValueLabel()
    let log = ValueLog()
    try slider.addTarget(label, action: ValueLabel.show, for: valueChanged)
    let logging = try slider.addTarget(log, action: ValueLog.record, for: valueChanged)
    try withExtendedLifetime((label, log)) {
        try slider.send(valueChanged, 3)
        try logging.remove()
        print("  after removing the log's pair:")
        try slider.send(valueChanged, 4)
    }
}
