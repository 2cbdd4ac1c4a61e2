/// A layer of desired state above config.yaml, lowest first: the fleet, each group the device is in (in
/// `control.groups` order, later wins), the device itself.
package enum ConfigurationLayer: Hashable, Sendable, Codable, CustomStringConvertible {
    case fleet
    case group(String)
    case device

    /// `fleet`, `group lab`, `device`: how status and `check-config --explain` name it.
    package var description: String {
        switch self {
        case .fleet: "fleet"
        case .group(let name): "group \(name)"
        case .device: "device"
        }
    }
}
