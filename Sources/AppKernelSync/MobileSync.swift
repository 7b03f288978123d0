import AppKernelStore

/// The version of the Mobile SDK's MobileSync formats this module reads and writes (its sync
/// JSON and sync states), for diagnostics.
public enum MobileSync {
    /// The Mobile SDK release whose formats these are.
    public static let formatVersion = "13.0"
}
