import UVEvents
import UVLoop
import XCTest

// docs:begin color-picker
final class ColorPickerHandler {
    var log: [String] = []
    func onNone() { log.append("none") }
    func onFlag(_ flag: Bool) { log.append("flag \(flag)") }
    func onObject(_ object: String) { log.append("object \(object)") }
}

enum ColorPickerEvent {
    static let none = EventKey<Void>("noneEventKey")
    static let flag = EventKey<Bool>("booleanEventKey")
    static let object = EventKey<String>("objectEventKey")
}
// docs:end

// docs:begin slider-types
final class ValueLabel { var text = ""; func show(_ value: Int) { text = "\(value)" } }
final class ValueLog { var values: [Int] = []; func record(_ value: Int) { values.append(value) } }
let valueChanged = EventKey<Int>("valueChanged")
// docs:end

/// The examples of UVEvents.docc, run for real on the test's own thread.
final class EventsExamples: XCTestCase {
    func testEventRegistry() throws {
        let loop = try Loop()                  // this thread is the loop's thread
        let handler = ColorPickerHandler()
        // docs:begin registry
        let control = EventRegistry(loop: loop)
        try control.setTarget(handler)                        // held weakly; a new target clears every action
        try control.register(ColorPickerHandler.onNone, for: ColorPickerEvent.none)
        try control.register(ColorPickerHandler.onFlag, for: ColorPickerEvent.flag)
        try control.register(ColorPickerHandler.onObject, for: ColorPickerEvent.object)

        try control.send(ColorPickerEvent.none)               // handler.onNone()
        try control.send(ColorPickerEvent.flag, true)         // handler.onFlag(true)
        try control.send(ColorPickerEvent.object, "something") // handler.onObject("something")
        // try control.send(ColorPickerEvent.flag, "yes")     // does not compile: the key carries a Bool
        // docs:end
        XCTAssertEqual(handler.log, ["none", "flag true", "object something"])
        loop.shutdown()
    }

    func testEventControl() throws {
        let loop = try Loop()
        let label = ValueLabel()
        let log = ValueLog()
        // docs:begin control
        let slider = EventControl(loop: loop)
        try slider.addTarget(label, action: ValueLabel.show, for: valueChanged)
        let logging = try slider.addTarget(log, action: ValueLog.record, for: valueChanged)
        try slider.send(valueChanged, 3)    // label.show(3), then log.record(3)
        try logging.remove()
        try slider.send(valueChanged, 4)    // label.show(4)
        // docs:end
        XCTAssertEqual(label.text, "4")
        XCTAssertEqual(log.values, [3])
        withExtendedLifetime((label, log)) {}
        loop.shutdown()
    }
}
