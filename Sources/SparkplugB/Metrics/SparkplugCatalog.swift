/// Every metric of the edge node — its own and its devices' — with the aliases births announce and data and
/// commands use instead of names (6.4.4: unique across the edge node). Aliases are dense: the node's metrics from
/// 1 in order, then each device's in order, so a device's metric `i` has alias `aliasBase(device) + i` and the
/// DDATA writer needs no lookup.
package struct SparkplugCatalog: Sendable {
    /// The metrics every MotionAgent edge node has (docs/sparkplug.md): bdSeq and the node controls the
    /// specification defines, and what hosts need to see commands refused without a reply channel.
    package enum NodeMetric {
        package static let birthDeathSequence = "bdSeq"
        package static let rebirth = "Node Control/Rebirth"
        package static let nextServer = "Node Control/Next Server"
        package static let commandsApplied = "Commands/Applied"
        package static let commandsRefused = "Commands/Refused"
        package static let lastRefusal = "Commands/Last Refusal"
    }

    package static let standardNodeMetrics: [SparkplugMetricDefinition] = [
        SparkplugMetricDefinition(
            NodeMetric.birthDeathSequence,
            .int64,
            description: "birth/death sequence: the NDEATH that ends this session carries the same number"
        ),
        SparkplugMetricDefinition(
            NodeMetric.rebirth,
            .boolean,
            description: "write true to make the node publish its NBIRTH and every DBIRTH again",
            isWritable: true
        ),
        SparkplugMetricDefinition(
            NodeMetric.nextServer,
            .boolean,
            description: "write true to make the node leave this MQTT server for the next one in its list",
            isWritable: true
        ),
        SparkplugMetricDefinition(
            NodeMetric.commandsApplied,
            .uint64,
            description: "NCMD/DCMD writes the agent applied since it started"
        ),
        SparkplugMetricDefinition(
            NodeMetric.commandsRefused,
            .uint64,
            description: "NCMD/DCMD metrics the agent refused since it started (the reason: Commands/Last Refusal)"
        ),
        SparkplugMetricDefinition(
            NodeMetric.lastRefusal,
            .string,
            description: "why the last NCMD/DCMD metric was refused"
        ),
    ]

    package let nodeMetrics: [SparkplugMetricDefinition]
    package let devices: [SparkplugDeviceDefinition]
    private let deviceIndex: [String: Int]
    private let deviceAliasBase: [UInt64]
    private let nodeIndexByName: [String: Int]
    private let deviceMetricIndexByName: [[String: Int]]

    /// - Parameters:
    ///   - nodeMetrics: the node's own metrics beyond `standardNodeMetrics` (which come first), e.g. properties.
    ///   - devices: each device with its metrics; ids must be valid and distinct, metric names distinct within
    ///     the node and within each device, and none may differ from another only by case (5.2).
    package init(
        nodeMetrics extra: [SparkplugMetricDefinition] = [],
        devices: [SparkplugDeviceDefinition]
    )
        throws(SparkplugError)
    {
        let node = Self.standardNodeMetrics + extra
        nodeMetrics = node
        self.devices = devices
        nodeIndexByName = try Self.index(node, owner: "the edge node")
        var deviceIndex: [String: Int] = [:]
        var lowercased: Set<String> = []
        var bases: [UInt64] = []
        var byName: [[String: Int]] = []
        var next = UInt64(node.count) + 1
        for (i, device) in devices.enumerated() {
            try SparkplugIdentifier.validate(device.id, role: "Sparkplug device id")
            guard lowercased.insert(device.id.lowercased()).inserted else {
                throw SparkplugError(
                    .invalidCatalog,
                    "two Sparkplug devices are named \"\(device.id)\" (ids must differ in more than case)"
                )
            }
            deviceIndex[device.id] = i
            bases.append(next)
            byName.append(try Self.index(device.metrics, owner: "device \(device.id)"))
            next += UInt64(device.metrics.count)
        }
        self.deviceIndex = deviceIndex
        deviceAliasBase = bases
        deviceMetricIndexByName = byName
    }

    private static func index(
        _ metrics: [SparkplugMetricDefinition],
        owner: String
    ) throws(SparkplugError)
        -> [String: Int]
    {
        var index: [String: Int] = [:]
        var lowercased: Set<String> = []
        for (i, metric) in metrics.enumerated() {
            guard !metric.name.isEmpty, lowercased.insert(metric.name.lowercased()).inserted else {
                throw SparkplugError(
                    .invalidCatalog,
                    "\(owner) has two metrics named \"\(metric.name)\" (names must differ in more than case)"
                )
            }
            index[metric.name] = i
        }
        return index
    }

    // MARK: Node

    /// The alias of the node metric at `index` (from 1).
    package func nodeAlias(_ index: Int) -> UInt64 { UInt64(index) + 1 }

    package func nodeMetricIndex(named name: String) -> Int? { nodeIndexByName[name] }

    package func nodeMetricIndex(alias: UInt64) -> Int? {
        alias >= 1 && alias <= UInt64(nodeMetrics.count) ? Int(alias - 1) : nil
    }

    package func nodeAlias(named name: String) -> UInt64? { nodeMetricIndex(named: name).map(nodeAlias) }

    // MARK: Devices

    package func deviceIndex(of id: String) -> Int? { deviceIndex[id] }

    /// The alias of the device's first metric; metric `i` has `aliasBase + i`.
    package func aliasBase(ofDevice device: Int) -> UInt64 { deviceAliasBase[device] }

    package func deviceMetricIndex(device: Int, named name: String) -> Int? { deviceMetricIndexByName[device][name] }

    package func deviceMetricIndex(device: Int, alias: UInt64) -> Int? {
        let base = deviceAliasBase[device]
        let count = UInt64(devices[device].metrics.count)
        return alias >= base && alias < base + count ? Int(alias - base) : nil
    }
}
