extension StreamDeclaration {
    /// Every stream, in the order config.yaml, the status, the docs and the Sparkplug catalog list them.
    package static let table: [StreamDeclaration] = [
        .accelerometer, .gyroscope, .magnetometer, .deviceMotion, .pedometer, .activity, .altimeter, .submersion,
        .events, .temperature,
    ]

    /// Every topic, streams in table order, each stream's own topic first.
    package static var allTopics: [(stream: StreamDeclaration, topic: TopicDeclaration)] {
        table.flatMap { stream in stream.topics.map { (stream, $0) } }
    }
}
