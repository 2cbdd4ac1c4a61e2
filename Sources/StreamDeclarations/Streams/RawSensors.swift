extension StreamDeclaration {
    /// A sensor's samples as they come: one topic named after the stream, one vector, batchable.
    static func rawSensor(
        _ name: String,
        sensor: Sensor,
        rateHz: Double,
        coreMotion: String,
        what: String,
        description: String,
        field: FieldDeclaration,
        payload: (swiftCase: String, codec: String),
        binaryKind: Int,
        summary: [String],
        homeAssistant: [HomeAssistantEntity] = [],
        configDoc: [String]
    ) -> StreamDeclaration {
        StreamDeclaration(
            name: name,
            swiftName: name,
            summary: "\(coreMotion): the \(sensor.rawValue)'s samples as they come.",
            topics: [
                TopicDeclaration(
                    path: name,
                    kind: name,
                    coreMotion: coreMotion,
                    what: what,
                    description: description
                        + " The payload is either one sample ($defs/sample) or, with streams.\(name).batch > 1 and "
                        + "encoding json, a JSON batch ($defs/batch). With encoding binary the payload is not JSON at "
                        + "all: it starts with the bytes \"MAB\" (a JSON payload starts with '{') and holds 28-byte "
                        + "records of kind \(binaryKind) (docs/payloads.md, 'Batched streams'); the reference client "
                        + "(clients/python) decodes it into samples that are valid against $defs/sample.",
                    payload: PayloadDeclaration(
                        swiftCase: payload.swiftCase,
                        swiftType: "Vector3",
                        codec: payload.codec,
                        shape: .fields([field]),
                        summary: summary,
                        sparkplugFloats: true
                    )
                )
            ],
            defaults: Defaults(enabled: true, rateHz: rateHz, qos: 0, retain: false),
            requiredSensors: [sensor],
            pacingSensor: sensor,
            isRawSensor: true,
            batches: true,
            homeAssistant: homeAssistant,
            configDoc: configDoc
        )
    }

    /// The vector field of a raw sensor's payload: the value itself.
    static func rawVector(
        _ name: String,
        decimals: Int,
        unit: String,
        coreMotion: String,
        doc: String
    ) -> FieldDeclaration {
        FieldDeclaration(name, .vector(decimals: decimals), unit: unit, coreMotion: coreMotion, doc: doc, swift: "")
    }
}
