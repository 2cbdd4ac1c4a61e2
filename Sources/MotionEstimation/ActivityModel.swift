#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The activity classifier: two gradient-boosted tree ensembles, trained by
/// `scripts/research/activity/train_activity.py` (their tables are in `ActivityModel+Tables.swift`).
///
/// - The **motion** model reads a window's `ActivityFeatures` and tells stationary, walking, running, cycling
///   and `none` (what is none of Core Motion's classes: jumping, ball games, moving about in an elevator)
///   apart. It is trained on DSADS (8 people, torso, arm and leg units, 25 Hz; Altun, Barshan & Tunçel 2010)
///   and validated with each person held out in turn (`motion-bench activity`).
/// - The **vehicle** model reads TMD's eight magnitude statistics (`WindowStatistics`) and says whether the
///   window is in a vehicle. TMD (phones in cars, buses and trains) has no raw signal, so no richer feature
///   can be trained on it; the DSADS windows are its other non-vehicle examples.
///
/// The probability of automotive is the vehicle model's; the rest is shared by the motion model's classes.
package struct ActivityModel: Sendable {
    /// Core Motion's classes.
    package enum ActivityClass: Int, Sendable, CaseIterable {
        case stationary = 0
        case walking
        case running
        case cycling
        case automotive
    }

    /// TMD's statistics of one window.
    package struct WindowStatistics: Sendable, Equatable, TreeInput {
        /// Accelerometer magnitude, m/s² (specific-force magnitude: ≈ 9.81 at rest, whatever the sign).
        package var accelerationMean: Double
        package var accelerationMin: Double
        package var accelerationMax: Double
        package var accelerationStd: Double
        /// Gyroscope magnitude, rad/s.
        package var rotationMean: Double
        package var rotationMin: Double
        package var rotationMax: Double
        package var rotationStd: Double

        package init(
            accelerationMean: Double,
            accelerationMin: Double,
            accelerationMax: Double,
            accelerationStd: Double,
            rotationMean: Double,
            rotationMin: Double,
            rotationMax: Double,
            rotationStd: Double
        ) {
            self.accelerationMean = accelerationMean
            self.accelerationMin = accelerationMin
            self.accelerationMax = accelerationMax
            self.accelerationStd = accelerationStd
            self.rotationMean = rotationMean
            self.rotationMin = rotationMin
            self.rotationMax = rotationMax
            self.rotationStd = rotationStd
        }

        /// The vehicle model's inputs: the eight statistics, then both ranges and both coefficients of
        /// variation (`vehicle_inputs()` in the training script computes the same).
        package static let names = [
            "accelerationMean", "accelerationMin", "accelerationMax", "accelerationStd",
            "rotationMean", "rotationMin", "rotationMax", "rotationStd",
            "accelerationRange", "rotationRange", "accelerationVariation", "rotationVariation",
        ]

        package func input(_ i: Int) -> Double {
            switch i {
            case 0: accelerationMean
            case 1: accelerationMin
            case 2: accelerationMax
            case 3: accelerationStd
            case 4: rotationMean
            case 5: rotationMin
            case 6: rotationMax
            case 7: rotationStd
            case 8: accelerationMax - accelerationMin
            case 9: rotationMax - rotationMin
            case 10: accelerationStd / max(accelerationMean, 1e-6)
            default: rotationStd / max(rotationMean, 1e-6)
            }
        }
    }

    /// Class probabilities: Core Motion's five in `ActivityClass` order, then `none`.
    package struct Probabilities: Sendable, Equatable {
        package var stationary = 0.0
        package var walking = 0.0
        package var running = 0.0
        package var cycling = 0.0
        package var automotive = 0.0
        /// None of Core Motion's classes.
        package var none = 0.0

        package init() {}

        package subscript(c: ActivityClass) -> Double {
            switch c {
            case .stationary: stationary
            case .walking: walking
            case .running: running
            case .cycling: cycling
            case .automotive: automotive
            }
        }

        /// Moves each probability `k` of the way towards `p`'s.
        mutating func smooth(towards p: Probabilities, _ k: Double) {
            stationary += k * (p.stationary - stationary)
            walking += k * (p.walking - walking)
            running += k * (p.running - running)
            cycling += k * (p.cycling - cycling)
            automotive += k * (p.automotive - automotive)
            none += k * (p.none - none)
        }

        /// The class to report and its probability: automotive when the vehicle model's share is at least half
        /// (its model decides vehicle or not, and the motion model what else), otherwise the most probable of
        /// the other four. `none` never leads: what is none of the classes is reported as the nearest class,
        /// with the low confidence its share leaves.
        package var best: (ActivityClass, Double) {
            if automotive >= 0.5 { return (.automotive, automotive) }
            var c = ActivityClass.stationary
            var v = stationary
            if walking > v { (c, v) = (.walking, walking) }
            if running > v { (c, v) = (.running, running) }
            if cycling > v { (c, v) = (.cycling, cycling) }
            return (c, v)
        }
    }

    /// Stationary, walking, running, cycling, none (5 classes) from `ActivityFeatures`.
    package let motion: ActivityTrees
    /// Automotive or not (binary) from `WindowStatistics`.
    package let vehicle: ActivityTrees

    package init(motion: ActivityTrees, vehicle: ActivityTrees) {
        precondition(motion.classCount == 5 && motion.inputCount <= ActivityFeatures.names.count)
        precondition(vehicle.classCount == 1 && vehicle.inputCount <= WindowStatistics.names.count)
        self.motion = motion
        self.vehicle = vehicle
    }

    /// The model the agent ships, trained on every DSADS subject and TMD's training rows.
    package static let shipped: ActivityModel = {
        do {
            return ActivityModel(
                motion: try ActivityTrees(table: motionTable),
                vehicle: try ActivityTrees(table: vehicleTable)
            )
        } catch {
            fatalError("\(error)")
        }
    }()

    /// The motion model's probabilities (stationary, walking, running, cycling, none), in that order.
    package func motionProbabilities(_ f: ActivityFeatures) -> (Double, Double, Double, Double, Double) {
        let s = (
            motion.score(class: 0, f), motion.score(class: 1, f), motion.score(class: 2, f),
            motion.score(class: 3, f), motion.score(class: 4, f)
        )
        let m = max(s.0, s.1, s.2, s.3, s.4)
        let e = (exp(s.0 - m), exp(s.1 - m), exp(s.2 - m), exp(s.3 - m), exp(s.4 - m))
        let total = e.0 + e.1 + e.2 + e.3 + e.4
        return (e.0 / total, e.1 / total, e.2 / total, e.3 / total, e.4 / total)
    }

    /// The vehicle model's probability that the window is in a vehicle.
    package func vehicleProbability(_ w: WindowStatistics) -> Double {
        vehicle.probability(w)
    }

    /// Every class's probability for one window.
    package func probabilities(_ f: ActivityFeatures) -> Probabilities {
        let q = motionProbabilities(f)
        let vehicle = vehicleProbability(f.statistics)
        let rest = 1 - vehicle
        var p = Probabilities()
        p.stationary = rest * q.0
        p.walking = rest * q.1
        p.running = rest * q.2
        p.cycling = rest * q.3
        p.automotive = vehicle
        p.none = rest * q.4
        return p
    }
}
