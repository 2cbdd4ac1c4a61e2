import MotionEstimation
import MotionModel
import Testing

/// The shipped fall detector on real SisFall trials (Tests/Fixtures/data/falls/sisfall) and the simple events on
/// synthetic signals. Accuracy over the whole set is `motion-bench falls`' and the research script's
/// (BENCHMARKS.md, "Falls"); these pin the behaviour on a few trials from five subjects.
@Suite("Fall detection")
struct FallDetectorTests {
    /// A rate (by its decimation step from 200 Hz) and sensor set.
    struct Configuration: CustomTestStringConvertible, Sendable {
        var step: Int
        var gyroscope: Bool
        var testDescription: String { "\(200 / step) Hz\(gyroscope ? " + gyroscope" : ", accelerometer only")" }

        static let all = [1, 2, 4].flatMap { s in [true, false].map { Configuration(step: s, gyroscope: $0) } }
    }

    /// Falls of five subjects (one of them 60–75 years old), different directions and causes: forward slip while
    /// walking, trip while jogging, lateral fall getting up, backward fall sitting down, backward slip.
    static let falls = ["F01_SA01_R01", "F05_SA04_R03", "F09_SA08_R05", "F14_SA07_R02", "F02_SE06_R04"]
    /// The issue's must-nots, each its code's trial with the hardest impact in SisFall: collapsing into a chair
    /// (8.8 g), a stumble (8.0 g), a gentle jump (7.8 g).
    static let notFalls = ["D11_SA04_R05", "D18_SA01_R01", "D19_SA07_R04"]

    struct Run {
        var falls: [FallDetectionEvent] = []
        var resolutions: [FallDetectionEvent] = []
        var all: [MotionEvent] = []
    }

    static func run(
        _ samples: [IMUSample],
        settings: MotionEventDetector.Settings = .defaults,
        into detector: inout MotionEventDetector
    ) -> Run {
        var run = Run()
        for s in samples {
            let events = detector.update(s)
            if let f = events.fall { run.falls.append(f) }
            if let r = events.fallResolution { run.resolutions.append(r) }
            run.all.append(contentsOf: events)
        }
        return run
    }

    static func run(_ samples: [IMUSample], settings: MotionEventDetector.Settings = .defaults) -> Run {
        var detector = MotionEventDetector(settings: settings)
        return run(samples, into: &detector)
    }

    /// The time of the trial's largest |a|: the fall's impact in a fall trial.
    static func largestImpact(_ samples: [IMUSample]) -> (time: Double, g: Double) {
        let top = samples.max { ($0.acceleration?.norm ?? 0) < ($1.acceleration?.norm ?? 0) }
        return (top?.timestamp ?? .nan, top?.acceleration?.norm ?? .nan)
    }

    @Test(
        "a SisFall fall is reported once, at its impact, within 3 s, at every rate, with and without the gyroscope",
        arguments: falls,
        Configuration.all
    )
    func fallReported(trial: String, configuration c: Configuration) throws {
        let full = try SisFallSlices.samples(trial)
        let impact = Self.largestImpact(full)
        let run = Self.run(SisFallSlices.thinned(full, step: c.step, gyroscope: c.gyroscope))
        try #require(run.falls.count == 1, "\(trial) at \(c.testDescription): \(run.falls.count) falls")
        let f = run.falls[0]
        #expect(f.resolution == nil)
        #expect(abs(f.date - impact.time) <= 0.5, "reported impact at \(f.date) s, the largest |a| at \(impact.time) s")
        #expect(f.detectionDate - f.date > 0 && f.detectionDate - f.date <= 3, "latency \(f.detectionDate - f.date) s")
        #expect(f.peakAcceleration >= 1.6 && f.peakAcceleration <= impact.g + 1e-9)
        #expect(f.orientationChange >= 30 * Double.pi / 180 && f.orientationChange <= Double.pi)
        // The subjects lie still for the rest of the trial: no resolution within the default minute.
        #expect(run.resolutions.isEmpty)
    }

    @Test(
        "collapsing into a chair, a stumble and a gentle jump are not falls, at any rate, with or without the gyroscope",
        arguments: notFalls,
        Configuration.all
    )
    func notAFall(trial: String, configuration c: Configuration) throws {
        let full = try SisFallSlices.samples(trial)
        #expect(Self.largestImpact(full).g > 7, "the slice should hold a hard impact")
        let run = Self.run(SisFallSlices.thinned(full, step: c.step, gyroscope: c.gyroscope))
        #expect(run.falls.isEmpty, "\(trial) at \(c.testDescription): \(run.falls.map(\.date))")
        // They are impacts, though: the impact event sees them.
        #expect(run.all.contains { $0.kind == .impact })
    }

    @Test("the score's peak is the smoothed |a|: it hardly moves from 200 to 50 Hz, where the raw peak drops a quarter")
    func smoothedPeakAcrossRates() throws {
        let full = try SisFallSlices.samples("F09_SA08_R05")
        func fallFeatures(step: Int) throws -> FallDetector.Features {
            var detector = MotionEventDetector()
            for s in SisFallSlices.thinned(full, step: step, gyroscope: false) where detector.update(s).fall != nil {
                return try #require(detector.fall.lastCandidate)
            }
            throw SisFallSlices.SliceError(description: "no fall at step \(step)")
        }
        let fast = try fallFeatures(step: 1)
        let slow = try fallFeatures(step: 4)
        // The impact's top is a few samples at 200 Hz; every 4th sample misses most of it.
        #expect(slow.peakG < 0.8 * fast.peakG, "raw peak \(fast.peakG) g at 200 Hz, \(slow.peakG) g at 50 Hz")
        #expect(
            abs(slow.smoothedPeakG / fast.smoothedPeakG - 1) < 0.07,
            "smoothed peak \(fast.smoothedPeakG) g at 200 Hz, \(slow.smoothedPeakG) g at 50 Hz"
        )
        #expect(fast.smoothedPeakG > 1 && fast.smoothedPeakG < fast.peakG)
    }

    @Test("the detector assumes no orientation: the same fall with the axes turned and the sign flipped")
    func anyOrientation() throws {
        let full = try SisFallSlices.samples("F01_SA01_R01")
        let reference = try #require(Self.run(full).falls.first)
        // An arbitrary fixed mounting: 117° about a skewed axis, and specific force instead of Core Motion's sign.
        let mount = Quaternion(axis: Vector3(0.3, -0.8, 0.52).normalized, angle: 117 * Double.pi / 180)
        let turned = full.map { s -> IMUSample in
            var t = s
            t.acceleration = s.acceleration.map { -mount.rotate($0) }
            t.rotationRate = s.rotationRate.map { mount.rotate($0) }
            return t
        }
        let run = Self.run(turned)
        try #require(run.falls.count == 1)
        #expect(run.falls[0].date == reference.date)
        #expect(abs(run.falls[0].orientationChange - reference.orientationChange) < 1e-9)
        #expect(abs(run.falls[0].peakAcceleration - reference.peakAcceleration) < 1e-9)
    }

    @Test("still past the response window: the fall is resolved unresponsive, once, when the window ends")
    func unresponsive() throws {
        var settings = MotionEventDetector.Settings.defaults
        settings.fall.responseWindowSeconds = 5
        let run = Self.run(try SisFallSlices.samples("F05_SA04_R03"), settings: settings)
        let f = try #require(run.falls.first)
        try #require(run.resolutions.count == 1)
        let r = run.resolutions[0]
        #expect(r.resolution == .unresponsive)
        #expect(r.date == f.date && r.peakAcceleration == f.peakAcceleration && r.detectionDate == f.detectionDate)
        let resolvedAt = try #require(r.resolutionDate)
        #expect(resolvedAt >= f.detectionDate + 5 && resolvedAt < f.detectionDate + 5 + 0.01)
        // The report comes before its resolution on the stream.
        let order = run.all.compactMap { e -> FallDetectionEvent? in if case .fall(let f) = e { f } else { nil } }
        #expect(order.map(\.resolution) == [nil, .unresponsive])
    }

    @Test("walking again within the window: the fall is resolved rejected once 3 s of activity have accumulated")
    func rejected() throws {
        // A splice of two real recordings of one subject: the fall trial, then the first 15 s of a walk, its clock
        // continuing where the fall trial's ends (the wearer got up and walked away).
        let fall = try SisFallSlices.samples("F01_SA01_R01")
        let end = fall[fall.count - 1].timestamp + 1 / SisFallSlices.rateHz
        let walk = try SisFallSlices.samples("D01_SA01_R01_0-15s").map { s -> IMUSample in
            var t = s
            t.timestamp += end
            return t
        }
        let run = Self.run(fall + walk)
        try #require(run.falls.count == 1, "\(run.falls.map(\.date))")
        try #require(run.resolutions.count == 1)
        #expect(run.resolutions[0].resolution == .rejected)
        let at = try #require(run.resolutions[0].resolutionDate)
        // 3 s of activity since the report: a few tenths while lying (the subject shifts on the mat), the rest walking.
        #expect(at > end && at <= end + 5, "rejected at \(at) s, walking from \(end) s")
    }

    @Test(
        "a fall taken over after a restart gets its one resolution: rejected by walking, unresponsive at its window's end or at once past it"
    )
    func adoptedAfterARestart() throws {
        let fall = try SisFallSlices.samples("F01_SA01_R01")
        let reported = try #require(Self.run(fall).falls.first)
        // The next run's sample clock starts elsewhere (a new process, or a reboot): 1000 s on.
        let walk = try SisFallSlices.samples("D01_SA01_R01_0-15s")
        let offset = 1000.0
        let still = (0..<(200 * 70)).map { k in
            IMUSample(timestamp: offset + Double(k) / 200, acceleration: Vector3(0, 0, -1))
        }
        func taken(over detectedAgo: Double) -> MotionEventDetector {
            var detector = MotionEventDetector()
            var adopted = reported
            adopted.date = offset - detectedAgo - (reported.detectionDate - reported.date)
            adopted.detectionDate = offset - detectedAgo
            detector.adoptUnresolvedFall(adopted)
            return detector
        }

        var walking = taken(over: 10)
        let shifted = walk.map { sample -> IMUSample in
            var s = sample
            s.timestamp += offset
            return s
        }
        let moved = Self.run(shifted, into: &walking)
        #expect(moved.falls.isEmpty && moved.resolutions.map(\.resolution) == [.rejected])

        var lying = taken(over: 10)
        let lay = Self.run(still, into: &lying)
        try #require(lay.resolutions.count == 1)
        #expect(lay.resolutions[0].resolution == .unresponsive)
        #expect(lay.resolutions[0].date == offset - 10 - (reported.detectionDate - reported.date), "the adopted fall's")
        let at = try #require(lay.resolutions[0].resolutionDate)
        #expect(at >= offset + 50 && at < offset + 50.01, "60 s after its detection, 10 s before the restart: \(at)")

        var late = taken(over: 90)
        let past = Self.run(Array(still.prefix(10)), into: &late)
        #expect(past.resolutions.map(\.resolution) == [.unresponsive] && past.resolutions[0].resolutionDate == offset)

        var fallsOff = MotionEventDetector.Settings.defaults
        fallsOff.fallEnabled = false
        var off = MotionEventDetector(settings: fallsOff)
        off.adoptUnresolvedFall(reported)
        #expect(Self.run(still, into: &off).resolutions.isEmpty, "falls off: nothing to resolve")
    }

    @Test("settings changed while a fall awaits its resolution: it keeps it, under the new window; impacts off stop")
    func reconfiguredWhileAFallIsPending() throws {
        let fall = try SisFallSlices.samples("F01_SA01_R01")
        // The wearer lies still for 70 s after the trial: the last sample, repeated.
        let last = try #require(fall.last)
        let still = (1...(70 * 200)).map { n -> IMUSample in
            var s = last
            s.timestamp += Double(n) / SisFallSlices.rateHz
            return s
        }
        var detector = MotionEventDetector()
        var run = Self.run(fall, into: &detector)
        try #require(run.falls.count == 1)
        #expect(run.all.contains { $0.kind == .impact }, "the fall's impact, with impacts on")
        var retuned = detector.settings
        retuned.fall.responseWindowSeconds = 10
        retuned.impactEnabled = false
        detector.reconfigure(retuned)
        #expect(detector.fall.unresolvedFall?.date == run.falls[0].date, "the pending fall survives")
        run = Self.run(still, into: &detector)
        try #require(run.resolutions.count == 1)
        #expect(run.resolutions[0].resolution == .unresponsive)
        let detected = run.resolutions[0].detectionDate
        let resolvedAt = try #require(run.resolutions[0].resolutionDate)
        #expect(abs(resolvedAt - detected - 10) < 0.2, "the new 10 s window, not 60: \(resolvedAt - detected) s")
        // Impacts off: the same trial again brings a fall but no impact.
        let again = fall.map { s -> IMUSample in
            var t = s
            t.timestamp += still.last!.timestamp + 1
            return t
        }
        let second = Self.run(again, into: &detector)
        #expect(second.falls.count == 1)
        #expect(!second.all.contains { $0.kind == .impact })
        // Falls off: a pending fall is forgotten, nothing is reported.
        retuned.fallEnabled = false
        detector.reconfigure(retuned)
        #expect(detector.fall.unresolvedFall == nil)
    }

    @Test("an operator's resolution resolves the pending fall once; nothing resolves it again")
    func operatorResolution() throws {
        let samples = try SisFallSlices.samples("F09_SA08_R05")
        var settings = MotionEventDetector.Settings.defaults
        settings.fall.responseWindowSeconds = 2
        var detector = MotionEventDetector(settings: settings)
        let early = detector.resolveFall(.confirmed, at: 0)
        #expect(early == nil, "no fall yet")
        var reported: FallDetectionEvent?
        var later: [FallDetectionEvent] = []
        for s in samples {
            let e = detector.update(s)
            if let f = e.fall {
                reported = f
                let resolved = detector.resolveFall(.confirmed, at: s.timestamp + 0.5)
                let confirmed = try #require(resolved)
                #expect(confirmed.resolution == .confirmed && confirmed.resolutionDate == s.timestamp + 0.5)
                #expect(confirmed.date == f.date)
                let again = detector.resolveFall(.dismissed, at: s.timestamp + 1)
                #expect(again == nil)
            }
            if let r = e.fallResolution { later.append(r) }
        }
        #expect(reported != nil)
        #expect(later.isEmpty, "the 2 s window must not resolve a fall the operator resolved")
    }

    @Test("a fall is reported only when enabled; impacts and free falls only when theirs are")
    func switches() throws {
        let samples = try SisFallSlices.samples("F01_SA01_R01")
        let off = Self.run(
            samples,
            settings: MotionEventDetector.Settings(fallEnabled: false, impactEnabled: false, freeFallEnabled: false)
        )
        #expect(off.all.isEmpty)
        let on = Self.run(samples)
        #expect(on.falls.count == 1)
        #expect(on.all.contains { $0.kind == .impact })
    }
}
