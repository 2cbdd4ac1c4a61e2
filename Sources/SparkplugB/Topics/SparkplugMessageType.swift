/// The verbs of the Sparkplug B topic namespace (4.1.3). STATE is not among them: it has its own topic form
/// (`SparkplugStateTopic`).
package enum SparkplugMessageType: String, Sendable, Hashable, CaseIterable {
    case nodeBirth = "NBIRTH"
    case nodeDeath = "NDEATH"
    case nodeData = "NDATA"
    case nodeCommand = "NCMD"
    case deviceBirth = "DBIRTH"
    case deviceDeath = "DDEATH"
    case deviceData = "DDATA"
    case deviceCommand = "DCMD"

    /// DBIRTH, DDEATH, DDATA and DCMD name a device after the edge node; the others must not.
    package var isDeviceMessage: Bool {
        switch self {
        case .deviceBirth, .deviceDeath, .deviceData, .deviceCommand: true
        case .nodeBirth, .nodeDeath, .nodeData, .nodeCommand: false
        }
    }

    /// Whether the message carries `seq` (every one the edge node publishes but NDEATH; commands never).
    package var carriesSequenceNumber: Bool {
        switch self {
        case .nodeBirth, .nodeData, .deviceBirth, .deviceDeath, .deviceData: true
        case .nodeDeath, .nodeCommand, .deviceCommand: false
        }
    }
}
