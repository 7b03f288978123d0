extension LaunchArguments {
    /// The flags ``init(arguments:environment:strict:)`` reads, declared for a
    /// ``CommandLineTool``: a tool that runs on a ``ProcessHost`` accepts them and passes them
    /// through (``CommandLineTool/acceptsLaunchFlags``), and its `--help` lists them.
    public static let flags: [CommandLineTool.Flag] = [
        CommandLineTool.Flag("--background", "launch in the background"),
        CommandLineTool.Flag("--open-url", value: "URL", "launch to open URL (LaunchOptions.url)"),
        CommandLineTool.Flag("--source-app", value: "NAME", "the app that asked for the launch (LaunchOptions.sourceApplication)"),
        CommandLineTool.Flag("--shortcut", value: "TYPE", "launch from the home-screen shortcut TYPE (LaunchOptions.shortcutItem)"),
        CommandLineTool.Flag("--user-activity", value: "TYPE", "launch to continue the user activity TYPE (LaunchOptions.userActivity)"),
        CommandLineTool.Flag("--location", "launch for a location event (LaunchOptions.location)"),
        CommandLineTool.Flag("--fetch", "launch for a background fetch (LaunchOptions.backgroundFetch; implies --background)"),
    ]
}
