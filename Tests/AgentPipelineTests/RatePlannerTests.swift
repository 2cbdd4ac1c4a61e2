import AgentPipeline
import AgentPorts
import MotionModel
import MotionWire
import Testing

@Suite struct RatePlannerTests {
    let imu = SensorDevice(
        id: "iio:device0",
        name: "bmi160",
        sensors: [.accelerometer, .gyroscope],
        supportedRates: .list([25, 50, 100, 200, 400, 800, 1600])
    )
    let magnetometer = SensorDevice(
        id: "iio:device1",
        name: "ak8975",
        sensors: [.magnetometer],
        supportedRates: .range(min: 10, step: 10, max: 100)
    )

    @Test func choosesTheLowestSupportedRateServingEveryStream() {
        let r = RatePlanner.plan(devices: [imu, magnetometer], demandsHz: [.accelerometer: 60, .gyroscope: 30])
        #expect(r.plan.devices["iio:device0"] == DevicePlan(rateHz: 100, sensors: [.accelerometer, .gyroscope]))
        #expect(r.sensorRatesHz[.accelerometer] == 100)
        #expect(r.sensorRatesHz[.gyroscope] == 100)
    }

    @Test func clampsRequestsAboveTheMaximum() {
        let r = RatePlanner.plan(devices: [imu, magnetometer], demandsHz: [.accelerometer: 5000, .magnetometer: 1000])
        #expect(r.sensorRatesHz[.accelerometer] == 1600)
        #expect(r.sensorRatesHz[.magnetometer] == 100)
    }

    @Test func switchesOffDevicesNoStreamNeeds() {
        let r = RatePlanner.plan(devices: [imu, magnetometer], demandsHz: [.magnetometer: 25])
        #expect(r.plan.devices["iio:device0"]?.isOff == true)
        #expect(r.plan.devices["iio:device1"] == DevicePlan(rateHz: 30, sensors: [.magnetometer]))
        #expect(r.sensorRatesHz[.accelerometer] == nil)
    }

    @Test func onlyNeededSensorsOfADeviceAreEnabled() {
        let r = RatePlanner.plan(devices: [imu], demandsHz: [.gyroscope: 200])
        #expect(r.plan.devices["iio:device0"] == DevicePlan(rateHz: 200, sensors: [.gyroscope]))
    }
}
