public import AppKernel

/// A root controller that records its appearance callbacks (`willAppear`, `didAppear`,
/// `willDisappear`, `didDisappear`) in ``appearances``.
@MainActor
public final class RecordingRootController: RootController {
    /// The appearance callbacks received, oldest first.
    public var appearances: [String] = []

    /// Creates a controller that has not appeared.
    public init() {}

    /// Records `willAppear`.
    public func viewWillAppear() { appearances.append("willAppear") }
    /// Records `didAppear`.
    public func viewDidAppear() { appearances.append("didAppear") }
    /// Records `willDisappear`.
    public func viewWillDisappear() { appearances.append("willDisappear") }
    /// Records `didDisappear`.
    public func viewDidDisappear() { appearances.append("didDisappear") }
}
