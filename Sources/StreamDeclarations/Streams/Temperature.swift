extension StreamDeclaration {
    /// `{root}/temperature`: the sensors' own temperature — the IMU's die (`in_temp_*` beside the accelerometer on
    /// the IIO drivers that have it: inv_icm42600, bmi160 …) or the barometer's. Core Motion has no counterpart.
    package static let temperature = StreamDeclaration(
        name: "temperature",
        swiftName: "temperature",
        summary: "The sensors' temperature: the IMU's die or the barometer's (no Core Motion counterpart).",
        topics: [
            TopicDeclaration(
                path: "temperature",
                kind: "temperature",
                coreMotion: "none",
                retained: "per stream (off by default)",
                what: "the sensors' temperature (Core Motion has no counterpart)",
                description: "The temperature the sensors report (TemperatureStream): the IMU's die temperature where "
                    + "its driver has one, else the barometer's, at rate_hz. Off by default; a device whose sensors "
                    + "report none publishes nothing here.",
                payload: PayloadDeclaration(
                    swiftCase: "temperature",
                    swiftType: "TemperatureData",
                    codec: "TemperatureCodec",
                    shape: .fields([
                        FieldDeclaration(
                            "temperature",
                            .number(decimals: 2),
                            unit: "°C",
                            doc: "The latest temperature a sensor reported (the die's: above the air's while it runs).",
                            swift: "temperatureC"
                        )
                    ]),
                    initializer: ["timestamp", "temperatureC"],
                    summary: [#"String(format: "temperature=%.2f °C", v.temperatureC)"#]
                )
            )
        ],
        defaults: Defaults(enabled: false, rateHz: 1, qos: 0, retain: false),
        requiredSensors: [.accelerometer],
        pacingSensor: .accelerometer,
        homeAssistant: [
            HomeAssistantEntity(
                objectID: "temperature",
                name: "Sensor temperature",
                template: "{{ value_json.temperature }}",
                unit: "°C",
                deviceClass: "temperature",
                stateClass: "measurement"
            )
        ],
        configDoc: [
            "The sensors' temperature: the IMU's die (in_temp_* on the IIO drivers that have it) or the",
            "barometer's. No Core Motion counterpart.",
        ]
    )
}
