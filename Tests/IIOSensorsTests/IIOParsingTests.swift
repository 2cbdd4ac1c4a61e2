import AgentPorts
import MotionModel
import Testing

@testable import IIOSensors

@Suite("sysfs parsing and units")
struct IIOParsingTests {
    @Test("sampling_frequency_available as a list, in IIO's INT_PLUS_MICRO print format")
    func rateList() throws {
        let rates = try #require(SupportedRates(sysfs: "12.500000 25.000000 50.000000 100.000000 1600.000000\n"))
        #expect(rates == .list([12.5, 25, 50, 100, 1600]))
        #expect(rates.lowest(atLeast: 60) == 100)
        #expect(rates.lowest(atLeast: 12.5) == 12.5)
        #expect(rates.lowest(atLeast: 5000) == 1600)
    }

    @Test("sampling_frequency_available as a [min step max] range")
    func rateRange() throws {
        let rates = try #require(SupportedRates(sysfs: "[25 25 1600]"))
        #expect(rates == .range(min: 25, step: 25, max: 1600))
        #expect(rates.lowest(atLeast: 130) == 150)
        #expect(rates.lowest(atLeast: 1) == 25)
        #expect(rates.lowest(atLeast: 9000) == 1600)
    }

    @Test("garbage rate text is rejected", arguments: ["", "abc", "[1 2]", "[5 1 2]", "0 -3", "[1 1 100"])
    func rateGarbage(_ text: String) {
        #expect(SupportedRates(sysfs: text) == nil)
    }

    @Test("per-type rate lists intersect (bmi160 accel and gyro)")
    func rateIntersection() throws {
        let accel = try #require(SupportedRates(sysfs: "0.78125 1.5625 3.125 6.25 12.5 25 50 100 200 400 800 1600"))
        let gyro = try #require(SupportedRates(sysfs: "25 50 100 200 400 800 1600 3200"))
        #expect(accel.common(with: gyro) == .list([25, 50, 100, 200, 400, 800, 1600]))
    }

    @Test("mount matrix: parse the ABI's row format and rotate a reading")
    func mountMatrix() throws {
        let m = try #require(MountMatrix(parsing: "0, -1, 0; -1, 0, 0; 0, 0, -1"))
        #expect(m.apply(Vector3(1, 2, 3)) == Vector3(-2, -1, -3))
        #expect(MountMatrix(parsing: "1, 0, 0; 0, 1, 0; 0, 0, 1") == .identity)
        #expect(MountMatrix(parsing: " 0.5,0.866025,0 ; -0.866025, 0.5, 0; 0, 0, 1\n") != nil)
        #expect(m.description == "0, -1, 0; -1, 0, 0; 0, 0, -1")
    }

    /// FuzzIIOScan (CI, 26 Nov 2026): a whole number beyond Int's range trapped in `description`.
    @Test("mount matrix: a huge entry prints instead of trapping")
    func mountMatrixHugeEntry() throws {
        let text = "0, -199999999999999999999999999999999999999999999999999999999999999999999999, 0; -1, 0, 0; 0, 0, -1"
        let m = try #require(MountMatrix(parsing: text))
        #expect(m.description == "0, -2e+71, 0; -1, 0, 0; 0, 0, -1")
        #expect(MountMatrix(parsing: "0.5, 1, 0; -1, 0, 0; 0, 0, -1")?.description == "0.5, 1, 0; -1, 0, 0; 0, 0, -1")
    }

    @Test(
        "mount matrix garbage is rejected",
        arguments: [
            "", "1, 0, 0; 0, 1, 0", "1, 0; 0, 1; 0, 0", "a, 0, 0; 0, 1, 0; 0, 0, 1",
            "0, 0, 0; 0, 1, 0; 0, 0, 1", "nan, 0, 0; 0, 1, 0; 0, 0, 1",
        ]
    )
    func mountMatrixGarbage(_ text: String) {
        #expect(MountMatrix(parsing: text) == nil)
    }

    @Test("kernel units to the agent's: specific force m/s² → −g, Gauss → µT, m°C → °C")
    func units() {
        #expect(9.80665 * IIOQuantity.acceleration.agentUnitFactor == -1)
        #expect(0.5 * IIOQuantity.magneticField.agentUnitFactor == 50)
        #expect(23450 * IIOQuantity.temperature.agentUnitFactor == 23.45)
        #expect(IIOQuantity.angularVelocity.agentUnitFactor == 1)
        #expect(IIOQuantity.pressure.agentUnitFactor == 1)
    }

    @Test("samples per refill: about 20 ms, 32 at 1.6 kHz, at least 1")
    func refillSize() {
        #expect(IIODeviceWorker.samplesPerRefill(rateHz: 1600) == 32)
        #expect(IIODeviceWorker.samplesPerRefill(rateHz: 100) == 2)
        #expect(IIODeviceWorker.samplesPerRefill(rateHz: 1) == 1)
    }

    @Test("an unreachable context names the URI and the fix")
    func unreachableContext() {
        #expect(throws: IIOError.self) {
            _ = try IIODiscovery.devices(uri: "ip:127.0.0.1:1")
        }
        do {
            _ = try IIODiscovery.devices(uri: "ip:127.0.0.1:1")
        } catch {
            #expect(error.description.contains("ip:127.0.0.1:1"))
            #expect(error.description.contains("iiod"))
        }
        #expect(IIODiscovery.hasIMU(uri: "ip:127.0.0.1:1") == false)
    }
}
