extension StreamDeclaration {
    /// `{root}/gyroscope`: Core Motion's `CMGyroData`.
    package static let gyroscope = rawSensor(
        "gyroscope",
        sensor: .gyroscope,
        rateHz: 50,
        coreMotion: "CMGyroData",
        what: "raw rotation rate, rad/s",
        description: "Raw rotation rate (RawSensorStream).",
        field: rawVector(
            "rotationRate",
            decimals: 6,
            unit: "rad/s",
            coreMotion: "CMGyroData.rotationRate",
            doc: "Right-handed about the device axes, raw: the sensor's bias is included (device-motion's "
                + "rotationRate is bias-corrected)."
        ),
        payload: ("rotationRate", "RotationRateCodec"),
        binaryKind: 2,
        summary: [#"triple(v) + " rad/s""#],
        configDoc: ["Raw rotation rate in rad/s."]
    )
}
