import MotionModel

/// A sensor's placement on the board: the rotation from the chip's axes to the board's, as the kernel's
/// `in_<type>_mount_matrix` (also `in_mount_matrix` and `mount_matrix`) gives it.
///
/// Kernel Documentation/ABI/testing/sysfs-bus-iio: "x0, y0, z0; x1, y1, z1; x2, y2, z2" row by row, and
/// applications "should apply this rotation matrix to samples", so a reading `v` in chip axes is `M · v` in
/// board axes (iio-sensor-proxy's `apply_mount_matrix` does exactly this).
package struct MountMatrix: Sendable, Hashable, CustomStringConvertible {
    /// The three rows: `board.x = rows[0] · v`, and so on.
    package var rows: (Vector3, Vector3, Vector3) {
        get { (row0, row1, row2) }
        set { (row0, row1, row2) = newValue }
    }

    private var row0: Vector3
    private var row1: Vector3
    private var row2: Vector3

    package init(rows r0: Vector3, _ r1: Vector3, _ r2: Vector3) {
        row0 = r0
        row1 = r1
        row2 = r2
    }

    package static let identity = MountMatrix(rows: Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))

    package var isIdentity: Bool { self == .identity }

    /// Parses the sysfs text ("1, 0, 0; 0, -1, 0; 0, 0, -1"). Nil when it is not nine finite numbers in three
    /// rows, or a row is all zeros (which would erase an axis; iio-sensor-proxy rejects it too).
    package init?(parsing text: String) {
        let rows = text.split(separator: ";", omittingEmptySubsequences: false)
        guard rows.count == 3 else { return nil }
        var values: [Double] = []
        for row in rows {
            let cells = row.split(separator: ",", omittingEmptySubsequences: false)
            guard cells.count == 3 else { return nil }
            for cell in cells {
                guard let value = Double(cell.trimmingWhitespace()), value.isFinite else { return nil }
                values.append(value)
            }
        }
        let r0 = Vector3(values[0], values[1], values[2])
        let r1 = Vector3(values[3], values[4], values[5])
        let r2 = Vector3(values[6], values[7], values[8])
        guard r0 != .zero, r1 != .zero, r2 != .zero else { return nil }
        self.init(rows: r0, r1, r2)
    }

    /// `M · v`: a chip-axes reading in board axes.
    @inlinable
    package func apply(_ v: Vector3) -> Vector3 {
        let (r0, r1, r2) = rows
        return Vector3(r0.dot(v), r1.dot(v), r2.dot(v))
    }

    package var description: String {
        func cell(_ v: Double) -> String {
            // Int(exactly:): a value beyond Int (a fuzzed sysfs text) prints as a Double instead of trapping.
            Int(exactly: v).map(String.init) ?? String(v)
        }
        let (r0, r1, r2) = rows
        return [r0, r1, r2].map { "\(cell($0.x)), \(cell($0.y)), \(cell($0.z))" }.joined(separator: "; ")
    }

    package static func == (a: MountMatrix, b: MountMatrix) -> Bool {
        a.row0 == b.row0 && a.row1 == b.row1 && a.row2 == b.row2
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(row0)
        hasher.combine(row1)
        hasher.combine(row2)
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var s = self
        while let c = s.first, c.isWhitespace || c == "\0" { s.removeFirst() }
        while let c = s.last, c.isWhitespace || c == "\0" { s.removeLast() }
        return s
    }
}
