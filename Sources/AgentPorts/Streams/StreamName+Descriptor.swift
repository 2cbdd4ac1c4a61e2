extension StreamName {
    /// Everything about this stream (`StreamDescriptor.table`).
    package var descriptor: StreamDescriptor { StreamDescriptor.of(self) }

    /// The streams that publish a sensor's samples as they come, without estimation.
    package var isRawSensor: Bool { descriptor.isRawSensor }

    /// The streams that publish one message per sample and can therefore batch samples.
    package var canBatch: Bool { descriptor.batches }

    package static func < (a: StreamName, b: StreamName) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Every stream's settings when config.yaml says nothing.
    package static var defaultSettings: [StreamName: StreamSettings] {
        Dictionary(uniqueKeysWithValues: StreamDescriptor.table.map { ($0.name, $0.defaults) })
    }
}
