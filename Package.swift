// swift-tools-version:6.1
import PackageDescription

// The layout follows CONTRIBUTING.md: a thin executable over library modules that own the work.
// Adapters (IIOSensors, MosquittoTransport, Simulation, Recording, Platform) depend on AgentPorts, never on
// the pipeline, control or runtime; the compiler keeps these arrows (README, "How it is built").
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "MotionAgent",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "motion-agent", targets: ["MotionAgentCLI"]),
        .executable(name: "motion-bench", targets: ["MotionBench"]),
        .executable(name: "stream-codegen", targets: ["StreamCodegenTool"]),
        // For a subscriber written in Swift: the payloads, their codecs and decoders, the model types and the way
        // from a received topic to its payload kind. The only `public` API; every other module's, and the rest of
        // AgentPorts, is `package` (CONTRIBUTING.md, "Access").
        .library(name: "MotionWire", targets: ["MotionWire", "MotionModel", "AgentPorts"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.0"),
        // The Sparkplug B payload's runtime only: the generated code is committed (scripts/codegen/sparkplug), so
        // the build never compiles protoc-gen-swift.
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        // The console's sockets (`motion-agent console`): FlyingFox's FlyingSocks, non-blocking sockets on its own
        // poll loop, no SwiftNIO. Not FlyingFox's HTTP server: it imports FoundationNetworking, which would make the
        // statically linked agent need libcurl (BENCHMARKS.md, "Console").
        .package(url: "https://github.com/swhitty/FlyingFox.git", from: "0.27.1"),
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
        // The console's TLS (motion-agent console --tls-certificate); libmosquitto links the same libssl.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
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
        // The streams, declared once (name, topics, defaults, sensors, each payload's fields): plain data the
        // generator (StreamCodegen, scripts/codegen/streams/generate.sh) turns into the stream table, the codecs,
        // the Sparkplug metrics, the schemas and the docs. Nothing in the agent imports it.
        .target(name: "StreamDeclarations", swiftSettings: strict),
        .target(name: "StreamCodegen", dependencies: ["StreamDeclarations"], swiftSettings: strict),
        .executableTarget(name: "StreamCodegenTool", dependencies: ["StreamCodegen"], swiftSettings: strict),
        // What the core needs from the world (sensor source, broker, host system), the stream vocabulary and
        // the topic scheme. Every adapter depends on this, never on the pipeline, control or runtime.
        .target(name: "AgentPorts", dependencies: ["MotionModel"], swiftSettings: strict),
        // Every payload's encoder and decoder (JSON, binary batches): the agent, sub, watch, the bench, tests.
        .target(name: "MotionWire", dependencies: ["AgentPorts", "MotionModel"], swiftSettings: strict),
        // Sparkplug B 3.0 edge node, pure: payload schema (generated from Schema/sparkplug_b.proto), topics,
        // the session state machine (bdSeq, seq, births and deaths, primary host STATE, rebirth, commands) and
        // the allocation-free DDATA encoder. No MQTT and no clock of its own (docs/sparkplug.md).
        .target(
            name: "SparkplugB",
            dependencies: [
                "MotionModel",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Schema/sparkplug_b.proto"],
            swiftSettings: strict
        ),
        // Step and activity history on the device (SQLite), answering Core Motion's historical queries.
        .target(name: "MotionHistory", dependencies: ["CSQLite", "MotionModel"], swiftSettings: strict),
        // config.yaml ⇄ the ports' types, with validation that names the key, the value and what is allowed.
        .target(
            name: "AgentConfig",
            dependencies: ["MotionModel", "AgentPorts", "MotionWire", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict
        ),
        // The pipeline: sensor hub, rate planning, the streams and their estimators, the outbox, the durable log
        // and the publisher, and the controller that applies a configuration to them. Pure Swift, no C.
        .target(
            name: "AgentPipeline",
            dependencies: [
                "MotionModel", "MotionEstimation", "AgentPorts", "MotionWire", "AgentConfig",
                // Sparkplug's lane beside the outbox (sparkplug.enabled): the streams feed its device writers.
                "SparkplugB",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The control door: admission (size, signature, rate), the command table, the configuration's layers
        // (reconciler) and reloads. Everything that changes the running agent from outside enters here.
        .target(
            name: "AgentControl",
            dependencies: [
                "MotionModel", "AgentPorts", "MotionWire", "AgentConfig", "AgentPipeline", "MotionHistory",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Pure renderers of the agent's documents for other systems: Prometheus text, Home Assistant discovery.
        .target(name: "Integrations", dependencies: ["AgentPorts", "MotionWire"], swiftSettings: strict),
        // The running agent: its services (one ServiceGroup), the composition root (AgentBuilder), the
        // connection supervisor, the status composer, metrics, history and the operator's reports.
        .target(
            name: "AgentRuntime",
            dependencies: [
                "MotionModel", "MotionEstimation", "AgentPorts", "MotionWire", "AgentConfig", "MotionHistory",
                "AgentPipeline", "AgentControl", "Integrations",
                // The Sparkplug edge node's driver (SparkplugService): its own connection, births, commands.
                "SparkplugB",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // The operator's side of desired state, pure: each device's row from its retained status, the retained
        // documents read for display, and the next version of a layer's document (`fleet set|unset|clear` and the
        // console publish the same bytes).
        .target(
            name: "FleetOperations",
            dependencies: ["AgentConfig", "AgentControl", "AgentPorts", "MotionWire"],
            swiftSettings: strict
        ),
        // `motion-agent console`: the fleet and one device live in a browser. Its HTTP and WebSocket server (on
        // FlyingSocks; the parsers bounded and fuzzed), the state it aggregates from the broker (through the BrokerClient port: the CLI picks the adapter) and the
        // page's assets, compiled in as strings so the binary stays self-contained.
        .target(
            name: "FleetConsole",
            dependencies: [
                "FleetOperations", "AgentConfig", "AgentControl", "AgentPorts", "MotionWire", "MotionModel", "COpenSSL",
                .product(name: "FlyingSocks", package: "FlyingFox"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The page's files, compiled in by scripts/codegen/console/generate.sh (ConsoleAssets.swift).
            exclude: ["Assets"],
            swiftSettings: strict
        ),

        // Adapters: each depends on AgentPorts, never on the pipeline, control or runtime.
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
        // An MQTT broker and its clients in memory, moved only by a simulation's pump (docs/simulation.md); the
        // contract suite (BrokerContractTests) holds it to what a real mosquitto does.
        .target(name: "MemoryBroker", dependencies: ["AgentPorts"], swiftSettings: strict),
        // The whole agent in one process on virtual time (issue 40): the production service graph on one
        // deterministic executor and clock, with in-memory brokers, virtual IMUs and disks with crash semantics; the
        // fault explorer and its invariants (docs/simulation.md).
        .target(
            name: "AgentSimulation",
            dependencies: [
                "AgentRuntime", "AgentControl", "AgentPipeline", "AgentConfig", "AgentPorts", "MotionWire",
                "MotionModel", "Simulation", "MemoryBroker", "SparkplugB",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        .executableTarget(
            name: "MotionAgentCLI",
            dependencies: [
                "AgentRuntime", "AgentControl", "AgentPipeline", "AgentConfig", "AgentPorts", "MotionWire", "Platform",
                "Recording", "Simulation", "FleetOperations", "FleetConsole",
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
                "MotionModel", "MotionEstimation", "AgentPorts", "MotionWire", "AgentPipeline", "AgentControl",
                "AgentRuntime", "AgentConfig",
                "Platform", "Recording", "Simulation", "MosquittoTransport", "CBenchSupport", "AgentSimulation",
                // Sparkplug's encoding cost beside the native encodings (motion-bench sparkplug).
                "SparkplugB", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                // Real local services shared with the integration tests: mosquitto, processes, the fake IIO tree.
                "Harness",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),

        // Test-only: runs IIOSensors inside the fake IIO tree's private mount namespace (Sources/Harness/FakeIIOTree).
        // CBenchSupport: its allocation counters (benchmark mode counts the heap allocations of acquisition).
        .executableTarget(
            name: "IIOProbe",
            dependencies: [
                "IIOSensors", "AgentPorts", "MotionModel", "CBenchSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/IIOProbe",
            swiftSettings: strict
        ),

        // Real local services for the bench and the integration tests: a mosquitto on a free port, the RabbitMQ
        // and NATS clusters, child processes, the fake IIO sysfs tree (FakeIIOTree/, Python), a subscriber that
        // captures what it hears.
        .target(
            name: "Harness",
            dependencies: ["AgentPorts", "MosquittoTransport", "Platform"],
            exclude: ["FakeIIOTree"],
            swiftSettings: strict
        ),
        // Test-only fixtures on top of the harness: VM, TLS files, redirecting broker.
        .target(
            name: "TestSupport",
            dependencies: ["Harness", "MotionModel", "AgentPorts", "MosquittoTransport", "Platform"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),

        // Unit tests: one target per module, pure — no broker, root, network or VM (`scripts/test.sh --unit`).
        .testTarget(name: "MotionModelTests", dependencies: ["MotionModel"], swiftSettings: strict),
        .testTarget(
            name: "MotionEstimationTests",
            dependencies: ["MotionEstimation", "Simulation", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "MotionHistoryTests", dependencies: ["MotionHistory"], swiftSettings: strict),
        .testTarget(name: "AgentPortsTests", dependencies: ["AgentPorts"], swiftSettings: strict),
        // The generated files are what the declarations make (stale ones fail here, naming the fix).
        .testTarget(name: "StreamCodegenTests", dependencies: ["StreamCodegen"], swiftSettings: strict),
        .testTarget(name: "MotionWireTests", dependencies: ["MotionWire"], swiftSettings: strict),
        .testTarget(
            name: "SparkplugBTests",
            dependencies: ["SparkplugB", "MotionModel", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .testTarget(name: "PlatformTests", dependencies: ["Platform"], swiftSettings: strict),
        .testTarget(
            name: "RecordingTests",
            dependencies: ["Recording", "Simulation", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AgentConfigTests",
            dependencies: ["AgentConfig", "Platform", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AgentPipelineTests",
            dependencies: ["AgentPipeline", "Platform", "Simulation", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AgentControlTests",
            dependencies: ["AgentControl", "AgentPipeline", "Platform", "Simulation", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "IntegrationsTests", dependencies: ["Integrations", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AgentRuntimeTests", dependencies: ["AgentRuntime", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "IIOSensorsTests", dependencies: ["IIOSensors", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "MosquittoTransportTests", dependencies: ["MosquittoTransport"], swiftSettings: strict),
        // With the agent's outbox publisher: its lock held across publish, taken again by its acknowledgement handler.
        .testTarget(
            name: "MemoryBrokerTests",
            dependencies: [
                "MemoryBroker", "AgentPorts", "AgentPipeline", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AgentSimulationTests",
            dependencies: [
                "AgentSimulation", "MemoryBroker", "AgentRuntime", "AgentControl", "AgentConfig", "AgentPorts",
                "MotionWire", "MotionEstimation", "Integrations", "TestSupport", "FleetOperations", "SparkplugB",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FleetConsoleTests",
            dependencies: [
                "FleetConsole", "FleetOperations", "AgentConfig", "AgentControl", "AgentPorts", "MotionWire",
            ],
            swiftSettings: strict
        ),

        // Integration tests: real parts started by the tests. A missing part fails them with what to install.
        // A real mosquitto on a free loopback port, in process (the transport, the durable publisher).
        .testTarget(
            name: "BrokerIntegrationTests",
            dependencies: [
                "MosquittoTransport", "AgentPipeline", "AgentRuntime", "Integrations", "Platform", "TestSupport",
            ],
            swiftSettings: strict
        ),
        // The same cases against a real mosquitto (on a free loopback port, through MosquittoClient) and the in-memory
        // broker (MemoryBrokerClient): the contract that keeps MemoryBroker true to mosquitto.
        .testTarget(
            name: "BrokerContractTests",
            dependencies: ["MemoryBroker", "MosquittoTransport", "AgentPorts", "TestSupport"],
            swiftSettings: strict
        ),
        // Real libiio on the fake IIO sysfs tree in a private mount namespace (root).
        .testTarget(name: "IIOIntegrationTests", dependencies: ["IIOSensors", "TestSupport"], swiftSettings: strict),
        // The real motion-agent binary against real brokers (mosquitto, bridges, the RabbitMQ cluster).
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestSupport", "AgentRuntime", "AgentControl", "AgentPipeline", "AgentConfig", "AgentPorts",
                "MotionWire",
                "Platform", "MosquittoTransport",
            ],
            swiftSettings: strict
        ),
        // Three-node broker clusters (NATS, RabbitMQ) with the real motion-agent and its operator tool: desired
        // state on every node, failover, clears (MOTION_AGENT_CLUSTER_TESTS=1; scripts/test.sh runs it alone).
        .testTarget(name: "ClusterTests", dependencies: ["TestSupport", "AgentPorts"], swiftSettings: strict),
        // The Sparkplug edge node (SparkplugB, driven over MosquittoTransport) against an independent Sparkplug host
        // (pysparkplug, clients/python) on a real mosquitto.
        .testTarget(
            name: "SparkplugIntegrationTests",
            dependencies: ["SparkplugB", "MosquittoTransport", "AgentPorts", "TestSupport"],
            swiftSettings: strict
        ),
        // A Debian VM with the kernel's own IIO drivers (MOTION_AGENT_VM_TESTS=1; scripts/test.sh runs it alone).
        .testTarget(name: "SystemTests", dependencies: ["TestSupport"], swiftSettings: strict),
    ]
)

// Coverage-guided fuzz targets (Fuzz/, scripts/checks/fuzz.sh), one per parser. libFuzzer supplies `main`, so they link
// only when built with `-sanitize=fuzzer -parse-as-library`; they join the package only when MOTION_AGENT_FUZZ
// is set, which keeps them out of the normal build.
if Context.environment["MOTION_AGENT_FUZZ"] != nil {
    let fuzzTargets: [(String, [Target.Dependency])] = [
        ("FuzzControl", ["AgentControl"]),
        ("FuzzSignedControl", ["AgentControl", "AgentConfig", "MotionWire"]),
        ("FuzzSignedEnvelope", ["AgentControl", "AgentConfig", "MotionWire"]),
        ("FuzzStrictJSON", ["MotionWire"]),
        ("FuzzTrustedKeyFile", ["AgentControl", "AgentConfig"]),
        ("FuzzConfigYAML", ["AgentConfig"]),
        ("FuzzDesiredDocument", ["AgentConfig"]),
        ("FuzzRecordingCSV", ["Recording"]),
        ("FuzzBinaryBatch", ["MotionWire", "AgentPorts"]),
        ("FuzzIIOScan", ["IIOSensors", "AgentPorts"]),
        ("FuzzDurableLog", ["AgentPipeline", "Platform", .product(name: "Logging", package: "swift-log")]),
        ("FuzzSparkplugCommand", ["SparkplugB", .product(name: "SwiftProtobuf", package: "swift-protobuf")]),
        ("FuzzConsoleHTTP", ["FleetConsole"]),
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
