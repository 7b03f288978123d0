extension PipelineStage {
    /// The trace line of one pipeline step — the one text every trace of the kernel uses
    /// (AppKernelTesting's `TraceRecorder`, the process host's journal): `<stage>.<event>`
    /// (`app.didEnterBackground`, `system.didSuspend`, `sdk.phase(auth)`,
    /// `hooks(return).willResignActive`), a scene event as `<scene id>.<event>`
    /// (`scene-1.willConnect`) or, heard elsewhere, `<stage>.<scene id>.<event>`
    /// (`listeners.scene-1.didBecomeActive`).
    /// - Parameter event: The step's event.
    /// - Returns: The line, without a newline.
    public func traceLine(for event: LifecycleEvent) -> String {
        let raw = event.name.rawValue
        guard raw.hasPrefix("scene"), let scene = event.sceneID else { return "\(self).\(event)" }
        let short = raw.dropFirst("scene".count)
        let name = short.prefix(1).lowercased() + short.dropFirst()
        return self == .sceneDelegate(scene) ? "\(scene).\(name)" : "\(self).\(scene).\(name)"
    }
}
