extension StreamDeclaration {
    /// `{root}/events`: motion events — falls with their resolution (Core Motion's `CMFallDetectionEvent`),
    /// impacts, free falls and tilt — from `MotionEventDetector`.
    package static let events = StreamDeclaration(
        name: "events",
        swiftName: "events",
        summary:
            "CMFallDetectionEvent and the simple motion events: falls and their resolution, impacts, free falls, tilt.",
        topics: [
            TopicDeclaration(
                path: "events",
                kind: "events",
                coreMotion: "CMFallDetectionEvent",
                retained: "per stream (default QoS 1, durable)",
                what: "falls (then their resolution), impacts, free falls, tilt",
                description: "Motion events (EventsStream, MotionEventDetector), each published as soon as the "
                    + "detector is sure, never batched nor held back: a fall (reported once, then once more with its "
                    + "resolution), an impact, a free fall, a tilt leaving or re-entering its cone. `kind` says which; "
                    + "the other fields are that kind's. Dates are wall-clock Unix seconds.",
                payload: PayloadDeclaration(
                    swiftCase: "motionEvent",
                    swiftType: "MotionEvent",
                    codec: "MotionEventCodec",
                    shape: .variants(
                        discriminator: FieldDeclaration(
                            "kind",
                            .choice(
                                swiftType: "MotionEvent.Kind",
                                values: ["fall", "impact", "freeFall", "tilt"],
                                schema: nil
                            ),
                            doc: "Which event this is; the fields that follow are that kind's."
                        ),
                        [
                            VariantDeclaration(
                                "fall",
                                swiftType: "FallDetectionEvent",
                                doc: "A fall: an impact after which the body's posture changed and it lay still. "
                                    + "Reported once with resolution null as soon as the detector is sure (≤ 2.1 s "
                                    + "after the impact), then once more with its resolution; both carry the same date.",
                                initializer: [
                                    "date", "resolution", "peakAcceleration", "orientationChange", "detectionDate",
                                    "resolutionDate",
                                ],
                                fields: [
                                    FieldDeclaration(
                                        "date",
                                        .date,
                                        coreMotion: "CMFallDetectionEvent.date",
                                        doc: "The time of the impact; identifies the fall in both its reports."
                                    ),
                                    FieldDeclaration(
                                        "resolution",
                                        .choice(
                                            swiftType: "FallDetectionEvent.Resolution",
                                            values: ["confirmed", "dismissed", "rejected", "unresponsive"],
                                            schema: nil
                                        ),
                                        coreMotion: "CMFallDetectionEvent.resolution",
                                        doc: "null in the first report. rejected: normal activity resumed within the "
                                            + "response window (60 s); unresponsive: the device stayed still past it. "
                                            + "confirmed and dismissed are an operator's answers (the confirm-fall and "
                                            + "dismiss-fall commands).",
                                        presence: .nullable
                                    ),
                                    FieldDeclaration(
                                        "peakAcceleration",
                                        .number(decimals: 3),
                                        unit: "g",
                                        doc: "The largest acceleration magnitude of the impact.",
                                        constraints: FieldDeclaration.Constraints(minimum: 0)
                                    ),
                                    FieldDeclaration(
                                        "orientationChange",
                                        .number(decimals: 4),
                                        unit: "rad",
                                        doc: "The angle between the direction of gravity in the device before the "
                                            + "fall and after it.",
                                        constraints: FieldDeclaration.Constraints(minimum: 0, maximum: 3.1416)
                                    ),
                                    FieldDeclaration(
                                        "detectionDate",
                                        .date,
                                        doc: "When the detector was sure (the first report's time)."
                                    ),
                                    FieldDeclaration(
                                        "resolutionDate",
                                        .date,
                                        doc: "When the resolution was reached; null in the first report.",
                                        presence: .nullable
                                    ),
                                ]
                            ),
                            VariantDeclaration(
                                "impact",
                                swiftType: "ImpactEvent",
                                doc:
                                    "The acceleration magnitude rose above 3 g: a knock, a drop landing, a collision.",
                                initializer: ["date", "peakAcceleration", "duration"],
                                fields: [
                                    FieldDeclaration("date", .date, doc: "The first sample above the threshold."),
                                    FieldDeclaration(
                                        "peakAcceleration",
                                        .number(decimals: 3),
                                        unit: "g",
                                        doc: "The largest acceleration magnitude of the impact.",
                                        constraints: FieldDeclaration.Constraints(minimum: 0)
                                    ),
                                    FieldDeclaration(
                                        "duration",
                                        .number(decimals: 3),
                                        unit: "s",
                                        doc: "From the first to the last sample above the threshold.",
                                        constraints: FieldDeclaration.Constraints(minimum: 0)
                                    ),
                                ]
                            ),
                            VariantDeclaration(
                                "freeFall",
                                swiftType: "FreeFallEvent",
                                doc: "The acceleration magnitude stayed below 0.4 g for at least 0.15 s: the device "
                                    + "fell freely.",
                                initializer: ["date", "duration", "height"],
                                fields: [
                                    FieldDeclaration("date", .date, doc: "The first sample below the threshold."),
                                    FieldDeclaration(
                                        "duration",
                                        .number(decimals: 3),
                                        unit: "s",
                                        doc: "How long the magnitude stayed below the threshold.",
                                        constraints: FieldDeclaration.Constraints(minimum: 0)
                                    ),
                                    FieldDeclaration(
                                        "height",
                                        .number(decimals: 3),
                                        unit: "m",
                                        doc: "The height a body falls from rest in that time, ½ g t².",
                                        constraints: FieldDeclaration.Constraints(minimum: 0)
                                    ),
                                ]
                            ),
                            VariantDeclaration(
                                "tilt",
                                swiftType: "TiltEvent",
                                doc: "The direction of gravity in the device left a 30° cone around its attitude at "
                                    + "start (isTilted true), or came back inside it less 5° of hysteresis (false). "
                                    + "Off in the shipped detector settings.",
                                initializer: ["date", "isTilted", "angle"],
                                fields: [
                                    FieldDeclaration("date", .date, doc: "When the tilt crossed the cone's edge."),
                                    FieldDeclaration(
                                        "isTilted",
                                        .bool,
                                        doc: "True when the tilt left the cone, false when it came back inside."
                                    ),
                                    FieldDeclaration(
                                        "angle",
                                        .number(decimals: 4),
                                        unit: "rad",
                                        doc: "The angle between the direction of gravity now and at start.",
                                        constraints: FieldDeclaration.Constraints(minimum: 0, maximum: 3.1416)
                                    ),
                                ]
                            ),
                        ]
                    ),
                    summary: [
                        "switch v {",
                        "case .fall(let e):",
                        "    guard let resolution = e.resolution else {",
                        "        let turned = e.orientationChange * 180 / .pi",
                        "        return String(format: \"fall: peak %.1f g, turned %.0f°\", e.peakAcceleration, turned)",
                        "    }",
                        "    return \"fall resolved: \\(resolution.rawValue)\"",
                        "case .impact(let e): return String(format: \"impact: peak %.1f g for %.2f s\", e.peakAcceleration, e.duration)",
                        "case .freeFall(let e): return String(format: \"free fall: %.2f s (%.2f m)\", e.duration, e.height)",
                        "case .tilt(let e):",
                        "    return String(format: e.isTilted ? \"tilted %.0f°\" : \"level again (%.0f°)\", e.angle * 180 / .pi)",
                        "}",
                    ]
                )
            )
        ],
        // Durable at QoS 1: a fall must reach the operator through a broker outage and an agent restart, once.
        // Off by default: on, it runs the accelerometer at 50 Hz at least, which a device configured slower
        // would not expect.
        // rate_hz is the detector's sampling rate (it works at 50–200 Hz); every event goes out at once.
        defaults: Defaults(enabled: false, rateHz: 100, qos: 1, retain: false, durable: true),
        requiredSensors: [.accelerometer],
        pacingSensor: .accelerometer,
        // The detector's own settings (AgentConfiguration.events), runtime like the stream's: a desired document or
        // set-config changes them without a restart, and a fall awaiting its resolution keeps it.
        extraSettings: [
            SettingDeclaration(
                "falls",
                shipped: "true",
                doc: ["Report falls, then one follow-up with their resolution."]
            ),
            SettingDeclaration(
                "impacts",
                shipped: "true",
                doc: ["Report impacts: the acceleration above impact_threshold_g (peak and duration)."]
            ),
            SettingDeclaration(
                "free_falls",
                shipped: "true",
                doc: ["Report free falls: near 0 g for at least 0.15 s (duration and the height it implies)."]
            ),
            SettingDeclaration(
                "tilt",
                shipped: "false",
                doc: [
                    "Report tilt: the attitude leaving the cone of tilt_cone_degrees around the attitude the",
                    "device had when tilt was switched on (or the stream started), and coming back (5° hysteresis).",
                    "Off by default: a body-worn device tilts whenever its wearer sits or bends.",
                ]
            ),
            SettingDeclaration("impact_threshold_g", shipped: "3", doc: ["An impact's peak, g: 1.5–16. Default 3."]),
            SettingDeclaration(
                "fall_response_s",
                shipped: "60",
                doc: [
                    "Seconds after a fall's detection within which activity resolves it as rejected; still past",
                    "them, unresponsive (unless an operator confirmed or dismissed it first): 10–600. Default 60.",
                ]
            ),
            SettingDeclaration(
                "tilt_cone_degrees",
                shipped: "30",
                doc: ["The tilt cone's half-angle: 5–85°. Default 30."]
            ),
        ],
        homeAssistant: [
            HomeAssistantEntity(
                component: "event",
                objectID: "motion_event",
                name: "Motion event",
                template: "{{ {'event_type': value_json.kind, 'date': value_json.date, "
                    + "'resolution': value_json.get('resolution'), 'peak_acceleration': "
                    + "value_json.get('peakAcceleration')} | to_json }}",
                icon: "mdi:human-handsdown",
                eventTypes: ["fall", "impact", "freeFall", "tilt"]
            )
        ],
        configDoc: [
            "Motion events (Core Motion's CMFallDetectionEvent, and impacts, free falls, tilt) on events, each",
            "published at once — never batched nor held back. rate_hz is the detector's sampling rate (it works",
            "at 50–200 Hz from the accelerometer alone, and uses the gyroscope when another stream runs it).",
            "Durable at QoS 1 by default, so a fall reaches the broker through an outage and a restart, once.",
            "Falls, impacts and free falls on, tilt off; the other detector parameters are the ones chosen on",
            "SisFall (BENCHMARKS.md). Off by default: on, it runs the accelerometer at 50 Hz at least.",
        ]
    )
}
