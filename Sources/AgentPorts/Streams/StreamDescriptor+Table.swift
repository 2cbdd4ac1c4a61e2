import MotionModel

extension StreamDescriptor {
    /// Every stream, in the order config.yaml, the status and the docs list them.
    public static let table: [StreamDescriptor] = [
        rawSensor(
            .accelerometer,
            sensor: .accelerometer,
            rateHz: 50,
            coreMotion: "CMAccelerometerData",
            homeAssistant: ["x", "y", "z"].map { axis in
                HomeAssistantSensor(
                    objectID: "acceleration_\(axis)",
                    name: "Acceleration \(axis)",
                    topic: 0,
                    template: "{{ value_json.acceleration.\(axis) | round(3) }}",
                    unit: "g",
                    stateClass: "measurement",
                    icon: "mdi:axis-arrow"
                )
            }
        ),
        rawSensor(.gyroscope, sensor: .gyroscope, rateHz: 50, coreMotion: "CMGyroData"),
        rawSensor(.magnetometer, sensor: .magnetometer, rateHz: 25, coreMotion: "CMMagnetometerData"),
        StreamDescriptor(
            name: .deviceMotion,
            topics: [
                Topic(
                    stream: .deviceMotion,
                    path: "device-motion",
                    payload: .deviceMotion,
                    schema: "device-motion.schema.json",
                    coreMotion: "CMDeviceMotion"
                )
            ],
            defaults: StreamSettings(enabled: true, rateHz: 50, qos: 0, retain: false),
            requiredSensors: [.accelerometer, .gyroscope],
            // The estimator runs once per gyroscope sample.
            pacingSensor: .gyroscope,
            isRawSensor: false,
            batches: true,
            extraSettings: ["reference_frame", "reference_attitude"],
            homeAssistant: [
                HomeAssistantSensor(
                    objectID: "heading",
                    name: "Heading",
                    topic: 0,
                    template: "{{ value_json.heading | round(1) }}",
                    unit: "°",
                    stateClass: "measurement",
                    icon: "mdi:compass"
                )
            ]
                // Radians on the wire; degrees read better on a dashboard (57.29578 = 180/π).
                + [("roll", "y"), ("pitch", "x"), ("yaw", "z")].map { angle, axis in
                    HomeAssistantSensor(
                        objectID: angle,
                        name: angle.prefix(1).uppercased() + angle.dropFirst(),
                        topic: 0,
                        template: "{{ (value_json.attitude.\(angle) * 57.29578) | round(1) }}",
                        unit: "°",
                        stateClass: "measurement",
                        icon: "mdi:axis-\(axis)-rotate-clockwise"
                    )
                }
        ),
        StreamDescriptor(
            name: .pedometer,
            topics: [
                Topic(
                    stream: .pedometer,
                    path: "pedometer",
                    payload: .pedometer,
                    schema: "pedometer.schema.json",
                    coreMotion: "CMPedometerData"
                ),
                Topic(
                    stream: .pedometer,
                    path: "pedometer/events",
                    payload: .pedometerEvents,
                    schema: "pedometer-events.schema.json",
                    coreMotion: "CMPedometerEvent"
                ),
            ],
            // Event streams: rate_hz caps how often a changing value is published; state-like, so retained at
            // QoS 1 (a new dashboard sees the current count and activity at once).
            defaults: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true),
            requiredSensors: [.accelerometer],
            pacingSensor: nil,
            isRawSensor: false,
            batches: false,
            extraSettings: [],
            // Steps and distance restart from 0 with the agent: total_increasing treats a drop as a reset.
            homeAssistant: [
                HomeAssistantSensor(
                    objectID: "steps",
                    name: "Steps",
                    topic: 0,
                    template: "{{ value_json.numberOfSteps }}",
                    unit: "steps",
                    stateClass: "total_increasing",
                    icon: "mdi:walk"
                ),
                HomeAssistantSensor(
                    objectID: "distance",
                    name: "Distance",
                    topic: 0,
                    template: "{{ value_json.distance | round(1) }}",
                    unit: "m",
                    deviceClass: "distance",
                    stateClass: "total_increasing"
                ),
            ]
        ),
        StreamDescriptor(
            name: .activity,
            topics: [
                Topic(
                    stream: .activity,
                    path: "activity",
                    payload: .activity,
                    schema: "activity.schema.json",
                    coreMotion: "CMMotionActivity"
                )
            ],
            defaults: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true),
            requiredSensors: [.accelerometer],
            pacingSensor: nil,
            isRawSensor: false,
            batches: false,
            extraSettings: [],
            homeAssistant: [
                HomeAssistantSensor(
                    objectID: "activity",
                    name: "Activity",
                    topic: 0,
                    template: "{{ 'automotive' if value_json.automotive else 'cycling' if value_json.cycling else "
                        + "'running' if value_json.running else 'walking' if value_json.walking else "
                        + "'stationary' if value_json.stationary else 'unknown' }}",
                    deviceClass: "enum",
                    options: ["stationary", "walking", "running", "cycling", "automotive", "unknown"],
                    icon: "mdi:run"
                )
            ]
        ),
        StreamDescriptor(
            name: .altimeter,
            topics: [
                Topic(
                    stream: .altimeter,
                    path: "altimeter",
                    payload: .altimeter,
                    schema: "altimeter.schema.json",
                    coreMotion: "CMAltitudeData"
                ),
                Topic(
                    stream: .altimeter,
                    path: "altimeter/absolute",
                    payload: .absoluteAltitude,
                    schema: "altimeter-absolute.schema.json",
                    coreMotion: "CMAbsoluteAltitudeData"
                ),
            ],
            defaults: StreamSettings(enabled: true, rateHz: 1, qos: 0, retain: false),
            requiredSensors: [.barometer],
            pacingSensor: .barometer,
            isRawSensor: false,
            batches: false,
            extraSettings: [],
            homeAssistant: [
                HomeAssistantSensor(
                    objectID: "relative_altitude",
                    name: "Relative altitude",
                    topic: 0,
                    template: "{{ value_json.relativeAltitude | round(2) }}",
                    unit: "m",
                    deviceClass: "distance",
                    stateClass: "measurement"
                ),
                HomeAssistantSensor(
                    objectID: "pressure",
                    name: "Pressure",
                    topic: 0,
                    template: "{{ value_json.pressure }}",
                    unit: "kPa",
                    deviceClass: "atmospheric_pressure",
                    stateClass: "measurement"
                ),
            ]
        ),
        StreamDescriptor(
            name: .submersion,
            topics: [
                Topic(
                    stream: .submersion,
                    path: "submersion",
                    payload: .submersion,
                    schema: "submersion.schema.json",
                    coreMotion: "CMWaterSubmersionMeasurement"
                )
            ],
            // Off by default: most boards are not water-rated, and a barometer in a sealed case reads depth wrong.
            defaults: StreamSettings(enabled: false, rateHz: 1, qos: 1, retain: true),
            requiredSensors: [.barometer],
            pacingSensor: .barometer,
            isRawSensor: false,
            batches: false,
            extraSettings: [],
            homeAssistant: []
        ),
    ]

    /// A sensor's samples as they come: one topic named after the stream, batchable.
    private static func rawSensor(
        _ name: StreamName,
        sensor: SensorType,
        rateHz: Double,
        coreMotion: String,
        homeAssistant: [HomeAssistantSensor] = []
    ) -> StreamDescriptor {
        StreamDescriptor(
            name: name,
            topics: [
                Topic(
                    stream: name,
                    path: name.rawValue,
                    payload: PayloadKind(rawValue: name.rawValue)!,
                    schema: "\(name.rawValue).schema.json",
                    coreMotion: coreMotion
                )
            ],
            defaults: StreamSettings(enabled: true, rateHz: rateHz, qos: 0, retain: false),
            requiredSensors: [sensor],
            pacingSensor: sensor,
            isRawSensor: true,
            batches: true,
            extraSettings: [],
            homeAssistant: homeAssistant
        )
    }
}
