import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel

/// Builds the stream object behind each stream name from the configuration: raw sensor streams and the
/// estimator streams, each with the settings its estimator needs.
package struct StreamCatalog: Sendable {
    package let configuration: AgentConfiguration
    package let topics: TopicScheme
    package let topicTable: TopicTable
    /// Magnetic declination at the configured location, degrees east; nil without a location.
    package let declinationDegrees: Double?
    /// How far a magnetic heading can be trusted at the configured location (WMM's horizontal field);
    /// nil without a location, when the device judges from the field it measures.
    package let headingUsability: WorldMagneticModel.HeadingUsability?
    /// The step detector the pedometer and activity streams made here share.
    package let gait = SharedGait()

    package init(
        configuration: AgentConfiguration,
        topics: TopicScheme,
        topicTable: TopicTable,
        declinationDegrees: Double?,
        headingUsability: WorldMagneticModel.HeadingUsability? = nil
    ) {
        self.configuration = configuration
        self.topics = topics
        self.topicTable = topicTable
        self.declinationDegrees = declinationDegrees
        self.headingUsability = headingUsability
    }

    /// The WMM field at `location` today, or nil without a location.
    package static func field(
        for location: LocationSettings,
        on date: Double
    ) throws -> WorldMagneticModel.GeomagneticField? {
        guard let latitude = location.latitude, let longitude = location.longitude else { return nil }
        return try WorldMagneticModel.wmm2025.field(
            latitude: latitude,
            longitude: longitude,
            altitudeKm: location.altitudeM / 1000,
            decimalYear: WorldMagneticModel.decimalYear(unixSeconds: date)
        )
    }

    /// The declination from the World Magnetic Model at `location` today, or nil when no location is
    /// configured or the model cannot answer (outside its years: the error says so in the log).
    package static func declination(for location: LocationSettings, on date: Double) throws -> Double? {
        try field(for: location, on: date)?.declinationDegrees
    }
}
