import ArgumentParser
import Foundation
import MotionEstimation
import MotionModel

/// Runs the shipped device-motion estimator over a BROAD trial (Laidig et al., Data 6(7):72, 2021,
/// CC-BY-4.0) and writes the attitude as sensor → ENU quaternions for scripts/research/score_broad.py;
/// optionally times the update.
struct BroadAccuracy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broad",
        abstract: "Estimate attitude over a BROAD trial CSV; write qw,qx,qy,qz (sensor → ENU) and time the update."
    )

    enum Estimator: String, ExpressibleByArgument, CaseIterable {
        /// DeviceMotionEstimator in xMagneticNorthZVertical, as the agent ships it (with magnetometer calibration).
        case deviceMotion = "device-motion"
        /// AttitudeFilter alone, 9-axis, raw magnetometer (the VQF port, for comparison with vqf).
        case filter
    }

    @Option(help: "A BROAD trial CSV (t_s, gyr_*, acc_* m/s², mag_* µT, …).") var trial: String
    @Option(help: "Where to write the estimate CSV (header qw,qx,qy,qz).") var output: String?
    @Option(help: "device-motion (shipped) or filter (the VQF port alone).") var estimator: Estimator = .deviceMotion
    @Option(help: "Where to write the device-motion 1-σ estimates (header sigma_inclination,sigma_heading, degrees).")
    var sigmaOutput: String?
    @Option(
        help:
            "Where to write the filter state the uncertainty model reads, per sample (for scripts/research/broad_uncertainty.py --fit)."
    )
    var featuresOutput: String?
    @Flag(help: "Print the magnetometer calibration every 10 s.") var verbose = false
    @Option(help: "Timing passes over the trial for the ns/update figures (0: no timing).") var timingPasses = 0

    struct Trial {
        var t: [Double] = []
        var gyr: [Vector3] = []
        var acc: [Vector3] = []
        var mag: [Vector3] = []
    }

    func run() throws {
        let data = try load(trial)
        let n = data.t.count
        guard n > 1 else { throw ValidationError("\(trial) has no samples — pass a BROAD trial CSV") }
        let interval = (data.t[n - 1] - data.t[0]) / Double(n - 1)

        var quaternions = [Quaternion](repeating: .identity, count: n)
        var sigmas = [(Double, Double)](repeating: (180, 180), count: n)
        var features =
            "t,steered,gain,disagreement,rate,rate_vertical,bias_var_h,bias_var_v,user,accuracy,rest,dist,"
            + "mag_x,mag_y,mag_z,delta,dip,sustained\n"
        if featuresOutput != nil { features.reserveCapacity(n * 160) }
        switch estimator {
        case .deviceMotion:
            var e = DeviceMotionEstimator(referenceFrame: .xMagneticNorthZVertical, sampleInterval: interval)
            for i in 0..<n {
                let s = IMUSample(
                    timestamp: data.t[i],
                    acceleration: data.acc[i],
                    rotationRate: data.gyr[i],
                    magneticField: data.mag[i]
                )
                if let m = e.update(s) {
                    if verbose, i % 2857 == 0 {
                        let c = e.calibrator
                        print(
                            String(
                                format:
                                    "t %.1f accuracy %@ hard iron %.2f %.2f %.2f norm %.2f residual %.4f soft x %.3f %.3f %.3f dist %@",
                                data.t[i],
                                m.magneticFieldAccuracy.rawValue,
                                c.hardIron.x,
                                c.hardIron.y,
                                c.hardIron.z,
                                c.fieldNorm,
                                c.relativeResidual,
                                c.softIron.r0.x,
                                c.softIron.r1.y,
                                c.softIron.r2.z,
                                e.filter.isMagneticDisturbanceDetected ? "yes" : "no"
                            )
                        )
                    }
                    quaternions[i] = Quaternion.aboutZ(.pi / 2) * m.attitude
                    sigmas[i] = (e.uncertainty.inclinationDegrees, e.uncertainty.headingDegrees)
                    if featuresOutput != nil {
                        let f = e.filter
                        let w = m.rotationRate
                        let variance = f.gyroscopeBiasEarthVariance
                        let accuracy = MagneticFieldAccuracy.allCases.firstIndex(of: e.calibrator.accuracy) ?? 0
                        let steered = e.calibrator.isConsistent ? 1 : 0
                        features += "\(data.t[i]),\(steered),\(f.magneticGain),\(f.magneticDisagreement),"
                        features +=
                            "\(w.norm),\(f.quaternion6D.rotate(w).z),\(variance.horizontal),\(variance.vertical),"
                        features += "\(m.userAcceleration.norm),\(accuracy),\(f.isAtRest ? 1 : 0),"
                        features += "\(f.isMagneticDisturbanceDetected ? 1 : 0),"
                        let b = m.magneticField
                        features += "\(b.x),\(b.y),\(b.z),\(f.headingCorrection),\(f.magneticReference.dip),"
                        features += "\(e.uncertainty.sustainedAcceleration)\n"
                    }
                } else if i > 0 {
                    quaternions[i] = quaternions[i - 1]
                    sigmas[i] = sigmas[i - 1]
                }
            }
        case .filter:
            var f = AttitudeFilter(sampleInterval: interval)
            for i in 0..<n {
                f.update(
                    timestamp: data.t[i],
                    gyroscope: data.gyr[i],
                    specificForce: -standardGravity * data.acc[i],
                    magneticField: data.mag[i]
                )
                quaternions[i] = f.quaternion9D
            }
        }
        if let output {
            var text = "qw,qx,qy,qz\n"
            text.reserveCapacity(n * 48)
            for q in quaternions {
                text += "\(q.w),\(q.x),\(q.y),\(q.z)\n"
            }
            try text.write(toFile: output, atomically: true, encoding: .utf8)
        }
        if let featuresOutput {
            try features.write(toFile: featuresOutput, atomically: true, encoding: .utf8)
        }
        if let sigmaOutput {
            var text = "sigma_inclination,sigma_heading\n"
            text.reserveCapacity(n * 32)
            for (i, h) in sigmas { text += "\(i),\(h)\n" }
            try text.write(toFile: sigmaOutput, atomically: true, encoding: .utf8)
        }
        if timingPasses > 0 {
            let ns9 = time(data, interval: interval, magnetometer: true)
            let ns6 = time(data, interval: interval, magnetometer: false)
            print(String(format: "ns/update %@ 9D %.1f 6D %.1f", estimator.rawValue, ns9, ns6))
        }
    }

    /// ns per update, best of `timingPasses` passes over the whole trial.
    func time(_ data: Trial, interval: Double, magnetometer: Bool) -> Double {
        let n = data.t.count
        var best = Double.infinity
        var checksum = 0.0
        for _ in 0..<timingPasses {
            let start = DispatchTime.now().uptimeNanoseconds
            switch estimator {
            case .deviceMotion:
                var e = DeviceMotionEstimator(
                    referenceFrame: magnetometer ? .xMagneticNorthZVertical : .xArbitraryZVertical,
                    sampleInterval: interval
                )
                for i in 0..<n {
                    let s = IMUSample(
                        timestamp: data.t[i],
                        acceleration: data.acc[i],
                        rotationRate: data.gyr[i],
                        magneticField: magnetometer ? data.mag[i] : nil
                    )
                    if let m = e.update(s) { checksum += m.attitude.w }
                }
            case .filter:
                var f = AttitudeFilter(sampleInterval: interval)
                for i in 0..<n {
                    f.update(
                        timestamp: data.t[i],
                        gyroscope: data.gyr[i],
                        specificForce: -standardGravity * data.acc[i],
                        magneticField: magnetometer ? data.mag[i] : nil
                    )
                    checksum += f.quaternion9D.w
                }
            }
            let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n)
            best = min(best, ns)
        }
        if checksum.isNaN { print("checksum NaN") }
        return best
    }

    /// Reads the trial; the accelerometer is converted to Core Motion's g (acc_g = −acc / 9.80665).
    func load(_ path: String) throws -> Trial {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard let header = lines.first else { throw ValidationError("\(path) is empty — pass a BROAD trial CSV") }
        let names = header.split(separator: ",").map(String.init)
        func column(_ name: String) throws -> Int {
            guard let i = names.firstIndex(of: name) else {
                throw ValidationError("\(path) has no column \(name) — pass a BROAD trial CSV")
            }
            return i
        }
        let ti = try column("t_s")
        let g = try ["gyr_x", "gyr_y", "gyr_z"].map(column)
        let a = try ["acc_x", "acc_y", "acc_z"].map(column)
        let m = try ["mag_x", "mag_y", "mag_z"].map(column)
        lines.removeFirst()
        var trial = Trial()
        for line in lines {
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) ?? .nan }
            trial.t.append(f[ti])
            trial.gyr.append(Vector3(f[g[0]], f[g[1]], f[g[2]]))
            trial.acc.append(Vector3(f[a[0]], f[a[1]], f[a[2]]) / -standardGravity)
            trial.mag.append(Vector3(f[m[0]], f[m[1]], f[m[2]]))
        }
        return trial
    }
}
