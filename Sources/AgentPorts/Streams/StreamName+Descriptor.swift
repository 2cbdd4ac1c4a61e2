extension StreamName {
    /// Everything about this stream (`StreamDescriptor.table`).
    public var descriptor: StreamDescriptor { StreamDescriptor.of(self) }

    /// The streams that publish a sensor's samples as they come, without estimation.
    public var isRawSensor: Bool { descriptor.isRawSensor }

    /// The streams that publish one message per sample and can therefore batch samples.
    public var canBatch: Bool { descriptor.batches }

    public static func < (a: StreamName, b: StreamName) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Every stream's settings when config.yaml says nothing.
    public static var defaultSettings: [StreamName: StreamSettings] {
        Dictionary(uniqueKeysWithValues: StreamDescriptor.table.map { ($0.name, $0.defaults) })
    }
}
