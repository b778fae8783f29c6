/// The value of a composite operation's outcome: the outcome of each named child, by name.
///
/// A child without a name keeps no entry. A child that is itself a composite keeps its own
/// outcome, whose value is its `CompositeResults`: lookups are one level deep, and
/// ``results(named:)`` steps into a nested composite.
///
/// ```swift
/// let outcome = try request.wait()
/// let doubled = outcome.value?.outcome(named: "double", as: Int.self)?.value
/// let inner = outcome.value?.results(named: "inner")?["fetch"]
/// ```
public struct CompositeResults: Sendable {
    /// The names of the children that have one, in the order the composite lists them.
    public let names: [String]
    private let outcomes: [String: Outcome<any Sendable>]

    init(names: [String], outcomes: [String: Outcome<any Sendable>]) {
        self.names = names
        self.outcomes = outcomes
    }

    /// The outcome of the child named `name`, with its value type erased; nil if no child has
    /// that name.
    /// - Parameter name: the child's name.
    public subscript(name: String) -> Outcome<any Sendable>? { outcomes[name] }

    /// The outcome of the child named `name`, with its value as `type`. Nil if no child has that
    /// name, or if its value is not a `Value` (an error or a missing value carries over as is).
    /// - Parameters:
    ///   - name: the child's name.
    ///   - type: the type of the child's value.
    public func outcome<Value: Sendable>(named name: String, as type: Value.Type = Value.self) -> Outcome<Value>? {
        guard let outcome = outcomes[name] else { return nil }
        switch outcome.result {
        case .success(let value):
            guard let value = value as? Value else { return nil }
            return Outcome(result: .success(value), isCancelled: outcome.isCancelled)
        case .failure(let error):
            return Outcome(result: .failure(error), isCancelled: outcome.isCancelled)
        case nil:
            return Outcome(result: nil, isCancelled: outcome.isCancelled)
        }
    }

    /// The results of the nested composite named `name`; nil if there is no such child, it is not
    /// a composite, or it was cancelled before it started (and so has no results).
    /// - Parameter name: the nested composite's name.
    public func results(named name: String) -> CompositeResults? {
        outcomes[name]?.value as? CompositeResults
    }
}
