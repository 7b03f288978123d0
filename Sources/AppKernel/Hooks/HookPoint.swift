/// A point in a pipeline where hooks can run: an ``ApplicationEvent`` for the application's
/// life cycle, a launch phase for the SDK manager. `Payload` is what its hooks receive.
public protocol HookPoint: Hashable, Sendable {
    /// What the hooks of this point receive.
    associatedtype Payload
    /// The point's name, as errors and traces show it.
    var hookPointName: String { get }
}
