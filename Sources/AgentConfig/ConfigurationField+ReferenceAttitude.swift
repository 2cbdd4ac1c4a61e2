import Foundation
import MotionModel

extension ConfigurationField {
    /// What `streams.device-motion.reference_attitude` accepts, in words (also in errors and command help).
    static let referenceAttitudeAllowed =
        "none, or a quaternion written w=… x=… y=… z=… (Hamilton, scalar w, device → reference frame; finite, "
        + "norm above 1e-6, normalised here), e.g. w=0.7071068 x=0 y=0 z=0.7071068"

    /// Below this norm a quaternion's direction is rounding noise, not a rotation someone meant.
    static let smallestReferenceNorm = 1e-6

    /// Device motion's reference attitude: `none` (nil) or a quaternion as `w=… x=… y=… z=…`. The labels are
    /// required because Core Motion's `CMQuaternion` lists x, y, z, w while most tools list w first; a bare
    /// list of four numbers would be read wrongly by half of its writers. Stored normalised, written back in
    /// Swift's shortest exact form so a value reads back bit for bit and layers compare it as text.
    static func referenceAttitude(_ keyPath: WritableKeyPath<AgentConfiguration, Quaternion?>) -> ConfigurationField {
        ConfigurationField(
            allowed: referenceAttitudeAllowed,
            decode: { text, _, configuration in
                switch parseReferenceAttitude(text) {
                case .success(let q):
                    configuration[keyPath: keyPath] = q
                    return nil
                case .failure(let problem):
                    return problem
                }
            },
            render: { configuration in
                guard let q = configuration[keyPath: keyPath] else { return .plain("none") }
                return .text(referenceAttitudeText(q))
            }
        )
    }

    /// The canonical text of a reference quaternion, as config.yaml, the layers and the status show it.
    static func referenceAttitudeText(_ q: Quaternion) -> String {
        "w=\(formatNumber(q.w)) x=\(formatNumber(q.x)) y=\(formatNumber(q.y)) z=\(formatNumber(q.z))"
    }

    /// `none` → nil; `w=… x=… y=… z=…` (any order, separated by spaces or commas) → the normalised quaternion.
    static func parseReferenceAttitude(_ text: String) -> Result<Quaternion?, FieldProblem> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased() == "none" || trimmed.isEmpty { return .success(nil) }
        var components: [String: Double] = [:]
        let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" })
        for word in words {
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, ["w", "x", "y", "z"].contains(parts[0].lowercased()) else {
                return .failure(
                    FieldProblem(
                        kind: .wrongType,
                        problem: "is not a quaternion: \"\(word)\" is not one of w=…, x=…, y=…, z=…"
                    )
                )
            }
            let label = parts[0].lowercased()
            guard components[label] == nil else {
                return .failure(
                    FieldProblem(kind: .invalidValue, problem: "gives \(label) twice: give each of w, x, y, z once")
                )
            }
            guard let value = parseNumber(parts[1]) else {
                return .failure(
                    FieldProblem(kind: .wrongType, problem: "has \(label)=\(parts[1]), which is not a number")
                )
            }
            guard value.isFinite else {
                return .failure(
                    FieldProblem(
                        kind: .outOfRange,
                        problem: "has \(label)=\(parts[1]), which is not finite: give finite numbers"
                    )
                )
            }
            components[label] = value
        }
        let missing = ["w", "x", "y", "z"].filter { components[$0] == nil }
        guard missing.isEmpty else {
            return .failure(
                FieldProblem(
                    kind: .missingValue,
                    problem: "lacks \(missing.joined(separator: ", ")): give all four of w, x, y, z (or none)"
                )
            )
        }
        return referenceQuaternion(w: components["w"]!, x: components["x"]!, y: components["y"]!, z: components["z"]!)
            .map(Optional.some)
    }

    /// Four finite components as a reference attitude: normalised, or refused when the norm is too small to
    /// say which rotation was meant (or overflows).
    static func referenceQuaternion(w: Double, x: Double, y: Double, z: Double) -> Result<Quaternion, FieldProblem> {
        // Scaled by the largest component first, so 1e-200 or 1e200 components neither underflow nor overflow.
        let q = Quaternion(w: w, x: x, y: y, z: z)
        let largest = max(abs(w), abs(x), abs(y), abs(z))
        guard largest.isFinite else {
            return .failure(FieldProblem(kind: .outOfRange, problem: "is not finite: give finite numbers"))
        }
        let norm =
            largest == 0 ? 0 : Quaternion(w: w / largest, x: x / largest, y: y / largest, z: z / largest).norm * largest
        guard norm > smallestReferenceNorm else {
            return .failure(
                FieldProblem(
                    kind: .outOfRange,
                    problem:
                        "has norm \(formatNumber(norm)), too close to 0 to be a rotation: give a quaternion of non-zero norm (it is normalised; w=1 x=0 y=0 z=0 is no rotation), or none to clear the reference"
                )
            )
        }
        return .success(Quaternion(w: q.w / norm, x: q.x / norm, y: q.y / norm, z: q.z / norm))
    }
}

extension DeviceMotionSettings {
    /// `streams.device-motion.reference_attitude`'s text for `q` (`w=… x=… y=… z=…`), as a command sets it.
    package static func referenceAttitudeText(_ q: Quaternion) -> String {
        ConfigurationField.referenceAttitudeText(q)
    }
}
