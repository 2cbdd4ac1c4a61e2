import ArgumentParser
import Foundation
import MotionEstimation
import MotionModel
import Simulation

/// The shipped pedometer over grids of simulated walks built to break it (`GaitStressSignal`, `ThighPocket`): the
/// pocket grid of issue 31, the knocking back pockets and the uneven steps of issue 41, plain gaits and swinging
/// bags. What the stress tests check case by case, over many more cases: where a change to the detector helps, where
/// it hurts. Every walk is deterministic (fixed seeds), so two builds can be compared walk by walk (`--list`).
struct GaitGrid: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gait-grid",
        abstract: "Counts steps on grids of simulated walks (pockets, knocks, uneven steps, bags); prints the errors."
    )

    @Option(help: "Which grid: pocket, knock, uneven, plain, bag or all.")
    var grid = "all"

    @Flag(help: "Print every walk: name, counted, truth, error %.")
    var list = false

    struct Walk {
        var name: String
        var signal: GaitStressSignal
        var walk: Double
        var seed: UInt64 = 1
    }

    func run() throws {
        let grids: [(String, String, () -> [Walk])] = [
            (
                "pocket", "pocket grid (issue 31): front/back × cadence × bounce × heel impact × other leg × dip",
                Self.pockets
            ),
            ("knock", "knocking back pockets (issue 41): three knocks a stride, the third at 0.72–0.90", Self.knocks),
            ("uneven", "uneven steps: front/back, timing asymmetry 0–0.25, with and without four knocks", Self.uneven),
            ("plain", "plain gaits: cadence 1.2–3.0, timing asymmetry, double peaks", Self.plain),
            ("bag", "a bag swinging at its own rate while walking", Self.bags),
        ]
        guard grid == "all" || grids.contains(where: { $0.0 == grid }) else {
            throw ValidationError("--grid must be pocket, knock, uneven, plain, bag or all")
        }
        for (name, title, make) in grids where grid == "all" || grid == name {
            var summary = StepAccuracy.Summary()
            for w in make() {
                let (samples, truth) = w.signal.samples(still: 5, walk: w.walk, seed: w.seed)
                var pedometer = Pedometer()
                for s in samples { pedometer.update(s) }
                let error = 100 * Double(pedometer.numberOfSteps - truth) / Double(truth)
                summary.errors.append(error)
                if list {
                    print(String(format: "%@\t%d\t%d\t%+.2f", w.name, pedometer.numberOfSteps, truth, error))
                }
            }
            let beyond = { (limit: Double) in summary.errors.filter { abs($0) > limit }.count }
            print(
                "\(title) — \(summary.errors.count) walks: \(summary.text), beyond 2 %: \(beyond(2)), beyond 5 %: \(beyond(5))"
            )
        }
    }

    /// Issue 31's grid (BENCHMARKS.md, "Pockets"), at 50 and 100 Hz: 384 walks of 90 s.
    static func pockets() -> [Walk] {
        var out: [Walk] = []
        for rate in [50.0, 100.0] {
            for back in [false, true] {
                for cadence in [1.5, 1.7, 1.9, 2.1] {
                    for bounce in [0.2, 0.3] {
                        for heel in [0.5, 1.0] {
                            for other in [0.25, 0.5] {
                                for dip in [0.0, 0.15, 0.3] {
                                    var s = GaitStressSignal(cadence: cadence, bounce: bounce)
                                    var pocket = back ? ThighPocket.back : ThighPocket.front
                                    pocket.swingDip = dip
                                    pocket.contralateralImpact = other
                                    s.pocket = pocket
                                    s.heelImpact = heel
                                    s.rate = rate
                                    let name =
                                        "pocket \(Int(rate)) Hz \(back ? "back" : "front") \(cadence) steps/s bounce \(bounce) heel \(heel) other \(other) dip \(dip)"
                                    out.append(Walk(name: name, signal: s, walk: 90))
                                }
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// Three knocks a stride in a loose back pocket, four sets of amplitudes (the last mostly sideways), the third
    /// knock at four phases, steps of uneven length: 96 walks of 180 s.
    static func knocks() -> [Walk] {
        let sets: [[Vector3]] = [
            [Vector3(0, 0, -1.5), Vector3(0, 2.5, 0), Vector3(2, 0, -0.8)],
            [Vector3(0, 0, -2.5), Vector3(0, 2, 0), Vector3(2.5, 0, -1)],
            [Vector3(0, 0, -1), Vector3(0, 1.5, 0), Vector3(1.5, 0, -0.5)],
            [Vector3(2, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 2)],
        ]
        var out: [Walk] = []
        for rate in [50.0, 100.0] {
            for cadence in [1.5, 1.72, 2.0] {
                for (k, set) in sets.enumerated() {
                    for third in [0.72, 0.78, 0.84, 0.90] {
                        var s = GaitStressSignal(cadence: cadence, bounce: 0.15)
                        s.pocket = .loose(
                            .back,
                            knocks: [
                                .init(phase: 0.1, reading: set[0]), .init(phase: 0.51, reading: set[1]),
                                .init(phase: third, reading: set[2]),
                            ]
                        )
                        s.heelImpact = 0.3
                        s.rate = rate
                        s.timingAsymmetry = 0.15
                        let name = "knock \(Int(rate)) Hz \(cadence) steps/s set \(k) third \(third)"
                        out.append(Walk(name: name, signal: s, walk: 180))
                    }
                }
            }
        }
        return out
    }

    /// Front and back pockets with steps of uneven length, with and without four knocks a stride (those of
    /// `GaitStressTests`' knocking back pocket), two seeds: 192 walks of 120 s.
    static func uneven() -> [Walk] {
        var out: [Walk] = []
        for rate in [50.0, 100.0] {
            for back in [false, true] {
                for cadence in [1.5, 1.8, 2.1] {
                    for asymmetry in [0.0, 0.1, 0.18, 0.25] {
                        for knocking in [false, true] {
                            for seed: UInt64 in [1, 2] {
                                var s = GaitStressSignal(cadence: cadence, bounce: 0.25)
                                s.pocket = .loose(back ? .back : .front, knocks: knocking ? ThighPocket.fourKnocks : [])
                                s.heelImpact = 0.8
                                s.rate = rate
                                s.timingAsymmetry = asymmetry
                                let name =
                                    "uneven \(Int(rate)) Hz \(back ? "back" : "front") \(cadence) steps/s asymmetry \(asymmetry) knocks \(knocking) seed \(seed)"
                                out.append(Walk(name: name, signal: s, walk: 120, seed: seed))
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// A device on the body's midline, tilting at the stride rate, legs unequal, with and without double peaks:
    /// 72 walks of 90 s.
    static func plain() -> [Walk] {
        var out: [Walk] = []
        for rate in [50.0, 100.0] {
            for cadence in [1.2, 1.5, 1.8, 2.1, 2.5, 3.0] {
                for asymmetry in [0.0, 0.15, 0.3] {
                    for peak in [0.0, 0.3] {
                        var s = GaitStressSignal(cadence: cadence, bounce: cadence >= 2.5 ? 0.7 : 0.25)
                        s.timingAsymmetry = asymmetry
                        s.rate = rate
                        s.secondPeak = peak
                        s.strikeHump = peak
                        s.tilt = 0.3
                        s.asymmetry = 0.2
                        let name =
                            "plain \(Int(rate)) Hz \(cadence) steps/s asymmetry \(asymmetry) double peak \(peak)"
                        out.append(Walk(name: name, signal: s, walk: 90))
                    }
                }
            }
        }
        return out
    }

    /// A bag swinging ±0.3 rad at 0.45–1.2 Hz while its carrier walks: 36 walks of 90 s.
    static func bags() -> [Walk] {
        var out: [Walk] = []
        for rate in [50.0, 100.0] {
            for cadence in [1.6, 1.8, 2.0] {
                for swing in [0.45, 0.55, 0.7, 0.9, 1.0, 1.2] {
                    var s = GaitStressSignal(cadence: cadence, bounce: 0.25)
                    s.bagFrequency = swing
                    s.bagSwing = 0.3
                    s.rate = rate
                    out.append(
                        Walk(name: "bag \(Int(rate)) Hz \(cadence) steps/s swing \(swing) Hz", signal: s, walk: 90)
                    )
                }
            }
        }
        return out
    }
}
