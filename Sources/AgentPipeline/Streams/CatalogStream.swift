import AgentPorts

/// A stream the catalog builds: its type reads what it needs from the catalog (the configuration, the topic
/// table, the location's field, the shared gait). `StreamCatalog.make`, generated from the stream declarations
/// (StreamCatalog+Make.swift), calls the type each declaration names.
package protocol CatalogStream: MotionStream {
    static func make(_ name: StreamName, _ settings: StreamSettings, in catalog: StreamCatalog) -> any MotionStream
}
