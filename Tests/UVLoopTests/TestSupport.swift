@testable import UVLoop

extension Loop {
    /// Whether libuv's idle handle is active (it forces zero-timeout polls: must be off when idle).
    var idleHandleIsActive: Bool { confined.value.idle.isActive }
}
