import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension WorldMagneticModel {
    /// The main field at one place and time, in the local geodetic frame: north, east and down along the
    /// WGS-84 ellipsoid's normal, in nanotesla, with the derived elements the WMM report defines.
    package struct GeomagneticField: Sendable, Hashable {
        /// X, towards geographic north, nT.
        package var northNanotesla: Double
        /// Y, towards east, nT.
        package var eastNanotesla: Double
        /// Z, down along the ellipsoid normal, nT (positive in the northern magnetic hemisphere).
        package var downNanotesla: Double

        package init(northNanotesla: Double, eastNanotesla: Double, downNanotesla: Double) {
            self.northNanotesla = northNanotesla
            self.eastNanotesla = eastNanotesla
            self.downNanotesla = downNanotesla
        }

        /// H = √(X² + Y²), nT.
        package var horizontalNanotesla: Double {
            (northNanotesla * northNanotesla + eastNanotesla * eastNanotesla).squareRoot()
        }

        /// F = √(H² + Z²), nT.
        package var totalNanotesla: Double {
            (northNanotesla * northNanotesla + eastNanotesla * eastNanotesla + downNanotesla * downNanotesla)
                .squareRoot()
        }

        /// D, the angle from true north to magnetic north, degrees, positive east: true heading =
        /// magnetic heading + D. At a geographic pole it is measured from the meridian of the longitude asked.
        package var declinationDegrees: Double { atan2(eastNanotesla, northNanotesla) * 180 / .pi }

        /// D in radians, for the estimator.
        package var declinationRadians: Double { atan2(eastNanotesla, northNanotesla) }

        /// I, the dip of the field below the horizontal, degrees, positive down.
        package var inclinationDegrees: Double { atan2(downNanotesla, horizontalNanotesla) * 180 / .pi }

        /// The field in µT in north-west-up axes (x = north, y = west = −east, z = up = −down): the reference
        /// frame of the simulator and the attitude estimator.
        package var northWestUpMicrotesla: Vector3 {
            Vector3(northNanotesla / 1000, -eastNanotesla / 1000, -downNanotesla / 1000)
        }

        /// Whether a magnetometer heading can be trusted here, from the horizontal intensity.
        package var headingUsability: HeadingUsability { HeadingUsability(horizontalNanotesla: horizontalNanotesla) }
    }
}
