extension StreamDeclaration {
    /// `{root}/magnetometer`: Core Motion's `CMMagnetometerData`.
    package static let magnetometer = rawSensor(
        "magnetometer",
        sensor: .magnetometer,
        rateHz: 25,
        coreMotion: "CMMagnetometerData",
        what: "raw magnetic field, µT",
        description: "Raw magnetic field (RawSensorStream).",
        field: rawVector(
            "magneticField",
            decimals: 3,
            unit: "µT",
            coreMotion: "CMMagnetometerData.magneticField",
            doc: "Device axes, raw: the board's hard and soft iron included (device-motion's magneticField.field is "
                + "calibrated)."
        ),
        payload: ("magneticField", "MagneticFieldCodec"),
        binaryKind: 3,
        summary: [#"triple(v) + " µT""#],
        configDoc: ["Raw magnetic field in µT."]
    )
}
