// swift-tools-version:6.1
import PackageDescription

// The layout follows ../shared/STYLE.md: a thin executable over library modules that own the work.
// Adapters (IIOSensors, MosquittoTransport, Simulation, Recording, Platform) depend on AgentPorts, never on
// AgentCore; the compiler keeps these arrows (README, "How it is built").
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "MotionAgent",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "motion-agent", targets: ["MotionAgentCLI"]),
        .executable(name: "motion-bench", targets: ["MotionBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.0"),
    ],
    targets: [
        // C libraries from Debian, each imported by exactly one Swift module.
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CLibIIO",
            pkgConfig: "libiio",
            providers: [.apt(["libiio-dev"])]
        ),

        // adjtimex(2) for "is the clock synchronized?": Swift's Glibc module does not export <sys/timex.h>.
        // Imported by Platform only.
        .target(name: "CSystemClock"),
        // Benchmark-only C: allocation counters (replaces malloc in motion-bench) and the monotonic clock. The
        // bare libmosquitto reference the agent's publishing is measured against is Swift, in MosquittoTransport
        // (BenchmarkReference), the one module that imports libmosquitto.
        .target(name: "CBenchSupport"),

        // The arrows, lowest first. Value types and pure algorithms:
        .target(name: "MotionModel", swiftSettings: strict),
        .target(name: "MotionEstimation", dependencies: ["MotionModel"], swiftSettings: strict),
        // What the core needs from the world (sensor source, broker, host system), the stream vocabulary and
        // the topic scheme. Every adapter depends on this, never on AgentCore.
        .target(name: "AgentPorts", dependencies: ["MotionModel"], swiftSettings: strict),
        // Every payload's encoder and decoder (JSON, binary batches): the agent, sub, watch, the bench, tests.
        .target(name: "MotionWire", dependencies: ["AgentPorts", "MotionModel"], swiftSettings: strict),
        // Step and activity history on the device (SQLite), answering Core Motion's historical queries.
        .target(name: "MotionHistory", dependencies: ["CSQLite", "MotionModel"], swiftSettings: strict),
        // config.yaml ⇄ the ports' types, with validation that names the key, the value and what is allowed.
        .target(
            name: "AgentConfig",
            dependencies: ["MotionModel", "AgentPorts", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict
        ),
        // Hub, streams, outbox, the control door and the services: pure Swift, no C.
        .target(
            name: "AgentCore",
            dependencies: [
                "MotionModel", "MotionEstimation", "AgentPorts", "MotionWire", "AgentConfig", "MotionHistory",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // Adapters: each depends on AgentPorts, never on AgentCore.
        .target(
            name: "Platform",
            dependencies: ["AgentPorts", "CSystemClock"],
            swiftSettings: strict
        ),
        .target(name: "Recording", dependencies: ["AgentPorts", "MotionModel"], swiftSettings: strict),
        .target(
            name: "Simulation",
            dependencies: ["MotionModel", "AgentPorts", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "IIOSensors",
            dependencies: ["CLibIIO", "MotionModel", "AgentPorts", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "MosquittoTransport",
            dependencies: ["CMosquitto", "AgentPorts", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),

        .executableTarget(
            name: "MotionAgentCLI",
            dependencies: [
                "AgentCore", "AgentConfig", "AgentPorts", "MotionWire", "Platform", "Recording", "Simulation",
                "IIOSensors", "MosquittoTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "MotionBench",
            dependencies: [
                "MotionModel", "MotionEstimation", "AgentPorts", "MotionWire", "AgentCore", "AgentConfig",
                "Platform", "Recording", "Simulation", "MosquittoTransport", "CBenchSupport",
                // Fixtures shared with the tests: a real mosquitto, processes, the fake IIO driver models.
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),

        // Test-only: runs IIOSensors inside the fake IIO tree's private mount namespace (Tests/Fixtures/iio).
        .executableTarget(
            name: "IIOProbe",
            dependencies: ["IIOSensors", "AgentPorts", "MotionModel", .product(name: "Logging", package: "swift-log")],
            path: "Tests/IIOProbe",
            swiftSettings: strict
        ),

        // Shared fixtures (a library the tests and the bench use): a real mosquitto launcher, a fake IIO sysfs
        // tree, process helpers.
        .target(
            name: "TestSupport",
            dependencies: ["MotionModel", "AgentPorts", "MosquittoTransport", "Platform"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),

        .testTarget(name: "MotionModelTests", dependencies: ["MotionModel"], swiftSettings: strict),
        .testTarget(
            name: "MotionEstimationTests",
            dependencies: ["MotionEstimation", "Simulation", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "MotionHistoryTests", dependencies: ["MotionHistory"], swiftSettings: strict),
        .testTarget(name: "AgentPortsTests", dependencies: ["AgentPorts"], swiftSettings: strict),
        .testTarget(name: "MotionWireTests", dependencies: ["MotionWire"], swiftSettings: strict),
        .testTarget(name: "PlatformTests", dependencies: ["Platform"], swiftSettings: strict),
        .testTarget(
            name: "RecordingTests",
            dependencies: ["Recording", "Simulation", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "AgentConfigTests", dependencies: ["AgentConfig", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "AgentCoreTests",
            dependencies: ["AgentCore", "Simulation", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "IIOSensorsTests", dependencies: ["IIOSensors", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "MosquittoTransportTests",
            dependencies: ["MosquittoTransport", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestSupport", "AgentCore", "AgentConfig", "AgentPorts", "MotionWire", "Platform", "MosquittoTransport",
            ],
            swiftSettings: strict
        ),
    ]
)

// Coverage-guided fuzz targets (Fuzz/, scripts/fuzz.sh), one per parser. libFuzzer supplies `main`, so they link
// only when built with `-sanitize=fuzzer -parse-as-library`; they join the package only when MOTION_AGENT_FUZZ
// is set, which keeps them out of the normal build.
if Context.environment["MOTION_AGENT_FUZZ"] != nil {
    let fuzzTargets: [(String, [Target.Dependency])] = [
        ("FuzzControl", ["AgentCore"]),
        ("FuzzSignedControl", ["AgentCore"]),
        ("FuzzConfigYAML", ["AgentConfig"]),
        ("FuzzDesiredDocument", ["AgentConfig"]),
        ("FuzzRecordingCSV", ["Recording"]),
        ("FuzzBinaryBatch", ["MotionWire"]),
        ("FuzzIIOScan", ["IIOSensors", "AgentPorts"]),
        ("FuzzDurableLog", ["AgentCore", .product(name: "Logging", package: "swift-log")]),
    ]
    package.targets.append(.target(name: "CFuzzerDriver", path: "Fuzz/CFuzzerDriver"))
    for (name, dependencies) in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: name,
                dependencies: dependencies + ["CFuzzerDriver"],
                path: "Fuzz/\(name)",
                swiftSettings: strict
            )
        )
    }
}
