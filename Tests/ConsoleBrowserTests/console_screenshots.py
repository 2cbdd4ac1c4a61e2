"""Screenshots of the console for the docs (scripts/docs/console-screenshots.sh): a small fleet of real agents on
the simulated IMU — one turning, one walking, two in group `lab` — a fleet document applied, one device refusing
its document and one gone offline; then the fleet view and the turning device's view, as PNG files."""

import json
import os
import sys
import time

from console_harness import Fleet, browser, probe, wait_for


def main(binary, out):
    fleet = Fleet(binary)
    driver = None
    try:
        fleet.start_broker()
        fleet.start_agent("imu-turntable", scenario="rotating", streams={
            "device-motion": "{rate_hz: 50, reference_frame: xMagneticNorthZVertical}", "accelerometer": "{rate_hz: 50}",
            "gyroscope": "{rate_hz: 50}", "magnetometer": "{rate_hz: 12.5}", "pedometer": "{rate_hz: 1}",
            "activity": "{rate_hz: 1}", "altimeter": "{rate_hz: 1}"})
        fleet.start_agent("imu-walker", scenario="walking", groups=["lab"], streams={
            "device-motion": "{rate_hz: 25}", "pedometer": "{rate_hz: 1}", "activity": "{rate_hz: 1}"})
        fleet.start_agent("imu-lab-2", groups=["lab"], streams={"accelerometer": "{rate_hz: 1}"})
        fleet.start_agent("imu-dock-7", streams={"accelerometer": "{rate_hz: 1}"})
        fleet.start_console()
        driver = browser(1400, 900)
        driver.get(f"{fleet.console_url}/?token={fleet.console_token}")
        wait_for("four devices", lambda: probe(driver, "window.consoleProbe.rows") == 4)
        fleet.publish("motion/fleet/desired", json.dumps({"version": 1, "metrics": {"interval_s": 5}}))
        fleet.publish("motion/imu-lab-2/desired", json.dumps({"version": 2, "streams": {"gyroscope": {"qos": 7}}}))
        time.sleep(3)
        fleet.stop_agent("imu-dock-7")
        wait_for("the offline device", lambda: driver.execute_script(
            "return document.querySelector('#fleet-rows .row.offline') !== null"), timeout=20)
        time.sleep(6)  # the metrics of the fleet document's 5 s interval
        driver.save_screenshot(os.path.join(out, "console-fleet.png"))
        driver.execute_script("location.hash = '#/device/imu-turntable'")
        wait_for("30 s of plots", lambda: (lambda p: p and p.get("rotation") and
                                           p["rotation"]["end"] - p["rotation"]["first"] > 25)(probe(driver, "window.consoleProbe.plots")),
                 timeout=40)
        time.sleep(2)
        driver.set_window_size(1400, 1250)
        time.sleep(0.5)
        driver.save_screenshot(os.path.join(out, "console-device.png"))
        print(f"wrote {out}/console-fleet.png and {out}/console-device.png")
    finally:
        if driver:
            driver.quit()
        fleet.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
