extension StreamDeclaration {
    /// `{root}/accelerometer`: Core Motion's `CMAccelerometerData`.
    package static let accelerometer = rawSensor(
        "accelerometer",
        sensor: .accelerometer,
        rateHz: 50,
        coreMotion: "CMAccelerometerData",
        what: "raw acceleration, g",
        description: "Raw acceleration (RawSensorStream).",
        field: rawVector(
            "acceleration",
            decimals: 6,
            unit: "g",
            coreMotion: "CMAccelerometerData.acceleration",
            doc: "Device axes, Core Motion's sign: gravity plus user acceleration, so a device lying face up at rest "
                + "reads (0, 0, −1); 1 g = 9.80665 m/s². The opposite of the IIO/Android specific force: "
                + "acceleration = −specificForce / 9.80665."
        ),
        payload: ("acceleration", "AccelerationCodec"),
        binaryKind: 1,
        summary: [#"triple(v) + String(format: "  |a|=%.3f g", v.norm)"#],
        homeAssistant: ["x", "y", "z"].map { axis in
            HomeAssistantEntity(
                objectID: "acceleration_\(axis)",
                name: "Acceleration \(axis)",
                template: "{{ value_json.acceleration.\(axis) | round(3) }}",
                unit: "g",
                stateClass: "measurement",
                icon: "mdi:axis-arrow"
            )
        },
        configDoc: ["Acceleration in g, gravity included, in Core Motion's sign convention (face up at rest: z = -1)."]
    )
}
