import MotionModel

/// A bounded, well-spread set of magnetometer samples for calibration: one sample per direction cell.
///
/// The direction of `sample − center` picks one of 54 cells (the 6 faces of a cube, 3 × 3 cells each),
/// so the set covers the sphere as evenly as the device's motion allows, and a device lying still fills one
/// cell rather than flooding the fit. Fixed size: inserting allocates nothing.
struct MagnetometerSampleBins: Sendable {
    static let cellCount = 54
    var samples = InlineArray<54, Vector3>(repeating: .zero)
    /// Seconds on the sensor clock when each cell was written; NaN for an empty cell.
    var written = InlineArray<54, Double>(repeating: .nan)
    /// Bit i set when cell i holds a sample.
    var filled: UInt64 = 0

    var count: Int { filled.nonzeroBitCount }

    /// How many of the cube's 6 faces hold at least one sample.
    var faceCount: Int {
        var n = 0
        for face in 0..<6 where (filled >> UInt64(face * 9)) & 0x1FF != 0 { n += 1 }
        return n
    }

    mutating func clear() {
        filled = 0
        for i in 0..<Self.cellCount { written[i] = .nan }
    }

    /// Stores `sample` in its cell when the cell is empty or its sample is older than `refresh` seconds
    /// (so the set follows slow changes without churning on noise). Returns whether the set changed.
    @discardableResult
    mutating func insert(_ sample: Vector3, center: Vector3, timestamp: Double, refresh: Double) -> Bool {
        let cell = Self.cell(of: sample - center)
        let bit = UInt64(1) << UInt64(cell)
        if filled & bit != 0, timestamp - written[cell] < refresh { return false }
        samples[cell] = sample
        written[cell] = timestamp
        filled |= bit
        return true
    }

    /// The cell of direction `d`: the face of its largest component (±x, ±y, ±z), then a 3 × 3 grid on it.
    static func cell(of d: Vector3) -> Int {
        let ax = abs(d.x)
        let ay = abs(d.y)
        let az = abs(d.z)
        let face: Int
        let u: Double
        let v: Double
        let m: Double
        if ax >= ay, ax >= az {
            face = d.x >= 0 ? 0 : 1
            u = d.y
            v = d.z
            m = ax
        } else if ay >= az {
            face = d.y >= 0 ? 2 : 3
            u = d.x
            v = d.z
            m = ay
        } else {
            face = d.z >= 0 ? 4 : 5
            u = d.x
            v = d.y
            m = az
        }
        guard m > 0 else { return 0 }
        // u/m and v/m are in [−1, 1]; thirds of that range make the grid.
        let i = min(2, max(0, Int((u / m + 1) * 1.5)))
        let j = min(2, max(0, Int((v / m + 1) * 1.5)))
        return face * 9 + i * 3 + j
    }

    /// The stored samples (for persistence and fitting outside the hot path).
    var storedSamples: [Vector3] {
        var out: [Vector3] = []
        for i in 0..<Self.cellCount where filled & (UInt64(1) << UInt64(i)) != 0 { out.append(samples[i]) }
        return out
    }
}
