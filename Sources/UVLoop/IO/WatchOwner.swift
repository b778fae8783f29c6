/// A watch whose async face can end it: what `WatchOwner` cancels.
protocol CancellableWatch: AnyObject, Sendable {
    @discardableResult
    func cancel() -> Bool
}

extension SignalWatch: CancellableWatch {}
extension DescriptorWatch: CancellableWatch {}

/// Cancels its watch when released: an async face's sequence dropped unused, or an iteration that
/// ended. A sequence holds one (iterating a sequence that was not kept does not cancel the watch),
/// and each iterator holds another (dropping the iterator cancels the watch).
final class WatchOwner<Watch: CancellableWatch>: Sendable {
    let watch: Watch

    init(_ watch: Watch) {
        self.watch = watch
    }

    deinit {
        watch.cancel()
    }
}
