/// A class whose deinit the tests watch, to prove that captured state is released.
public final class Tracked: Sendable {
    let onDeinit: @Sendable () -> Void

    public init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }

    deinit { onDeinit() }
}
