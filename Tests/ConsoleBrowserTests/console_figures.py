"""The console's figures (BENCHMARKS.md, "Console"), measured in headless Chromium through the driver:

  device  one agent on the simulated IMU turning, device motion, accelerometer and gyroscope at 50 Hz, watched by
          one page: first paint of the page (Paint Timing API, median of 5 loads), the delay from each sample's
          `time` (the agent's clock when it was sampled) to its arrival in the page (median, p95), and the console
          process's CPU (share of one core over --seconds) and resident memory, read from /proc. --tls: the same
          with the console serving HTTPS (a self-signed certificate the browser is told to trust).
  fleet   --agents N agents as `motion-bench fleet` runs them (simulated IMU at 25 Hz, accelerometer at 1 Hz,
          started 20 a second): the first render of N rows, then one row changed at a time (a device document
          published to one device, which reports it in its status) — the time from the WebSocket message to the
          next frame painted with it — and the console's CPU and memory with N devices.
"""

import argparse
import json
import statistics
import time

from console_harness import Fleet, browser, probe, process_cpu_seconds, process_rss_bytes, wait_for


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def first_paint(driver, url, loads=5):
    times = []
    for _ in range(loads):
        driver.get(url)
        entry = wait_for("paint timing", lambda: driver.execute_script(
            "return performance.getEntriesByName('first-contentful-paint')[0]?.startTime"))
        times.append(entry)
    return times


def device(arguments):
    fleet = Fleet(arguments.binary)
    driver = None
    try:
        fleet.start_broker()
        fleet.start_agent("bench-turner", scenario="rotating", streams={
            "device-motion": "{rate_hz: 50}", "accelerometer": "{rate_hz: 50}", "gyroscope": "{rate_hz: 50}"},
            metrics_s=60)
        if arguments.tls:
            certificate, key, spki = fleet.test_certificate()
            console = fleet.start_console("--tls-certificate", certificate, "--tls-key", key)
            driver = browser(trust_spki=spki, profile=fleet.directory + "/profile")
        else:
            console = fleet.start_console()
            driver = browser()
        driver.get(f"{fleet.console_url}/?token={fleet.console_token}")
        paints = first_paint(driver, fleet.console_url + "/")
        driver.get(fleet.console_url + "/#/device/bench-turner")
        wait_for("samples in the page", lambda: len(probe(driver, "window.consoleProbe.delays")) > 100)
        driver.execute_script("window.consoleProbe.delays = []")
        cpu0, t0 = process_cpu_seconds(console.pid), time.monotonic()
        time.sleep(arguments.seconds)
        cpu1, t1 = process_cpu_seconds(console.pid), time.monotonic()
        delays = probe(driver, "window.consoleProbe.delays")
        rss = process_rss_bytes(console.pid)
        with open(f"/proc/{console.pid}/status") as f:
            peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
        print(json.dumps({
            "first_contentful_paint_ms": {"runs": [round(p, 1) for p in paints], "median": round(statistics.median(paints), 1)},
            "delay_ms": {"samples": len(delays), "median": round(statistics.median(delays), 1),
                         "p95": round(percentile(delays, 0.95), 1), "max": round(max(delays), 1)},
            "console_cpu_percent_of_one_core": round(100 * (cpu1 - cpu0) / (t1 - t0), 2),
            "console_rss_mib": round(rss / 1048576, 1), "console_peak_rss_mib": round(peak / 1048576, 1),
            "seconds": round(t1 - t0, 1),
        }, indent=2))
    finally:
        if driver:
            driver.quit()
        fleet.close()


def fleet_view(arguments):
    fleet = Fleet(arguments.binary)
    driver = None
    try:
        fleet.start_broker()
        devices = [f"bench-fleet-{i:04d}" for i in range(arguments.agents)]
        began = time.monotonic()
        for index, name in enumerate(devices):
            fleet.start_agent(name, scenario="walking", hardware_hz=25, metrics_s=60,
                              streams={"accelerometer": "{rate_hz: 1}"})
            pause = began + (index + 1) / arguments.start_rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        console = fleet.start_console()
        driver = browser()
        driver.get(f"{fleet.console_url}/?token={fleet.console_token}")
        wait_for(f"{arguments.agents} rows", lambda: probe(driver, "window.consoleProbe.rows") >= arguments.agents,
                 timeout=300)
        wait_for("every device online", lambda: driver.execute_script(
            "return document.querySelectorAll('#fleet-rows .row.online').length") >= arguments.agents, timeout=300)
        time.sleep(2)
        first = probe(driver, "window.consoleProbe.firstRows")
        paints = first_paint(driver, fleet.console_url + "/", loads=3)
        wait_for(f"{arguments.agents} rows again", lambda: probe(driver, "window.consoleProbe.rows") >= arguments.agents,
                 timeout=120)
        first_again = probe(driver, "window.consoleProbe.firstRows")
        time.sleep(2)
        driver.execute_script("window.consoleProbe.rowUpdates = []")
        cpu0, t0 = process_cpu_seconds(console.pid), time.monotonic()
        for index in range(arguments.updates):
            device = devices[(index * 37) % len(devices)]
            fleet.publish(f"motion/{device}/desired", json.dumps({"version": index + 1, "metrics": {"interval_s": 61}}))
            wait_for(f"{device}'s row on device v{index + 1}", lambda: driver.execute_script(
                "const tr = [...document.querySelectorAll('#fleet-rows .row')].find(r => r.dataset.device === arguments[0]);"
                "return tr && tr.querySelector('.desired').textContent.includes('device v' + arguments[1]);",
                device, index + 1), timeout=30)
            time.sleep(0.3)
        cpu1, t1 = process_cpu_seconds(console.pid), time.monotonic()
        updates = probe(driver, "window.consoleProbe.rowUpdates")
        single = [u["ms"] for u in updates if u["rows"] == 1]
        applied = [u["applyMs"] for u in updates if u["rows"] == 1]
        print(json.dumps({
            "agents": arguments.agents,
            "first_render_ms": [first, first_again],
            "first_contentful_paint_ms": [round(p, 1) for p in paints],
            "one_row_updates": {"count": len(single), "median_ms": round(statistics.median(single), 1),
                                "p95_ms": round(percentile(single, 0.95), 1), "max_ms": round(max(single), 1),
                                "all_messages": len(updates),
                                "dom_updated_median_ms": round(statistics.median(applied), 2),
                                "dom_updated_max_ms": round(max(applied), 2)},
            "console_cpu_percent_of_one_core_during_updates": round(100 * (cpu1 - cpu0) / (t1 - t0), 2),
            "console_rss_mib": round(process_rss_bytes(console.pid) / 1048576, 1),
        }, indent=2))
    finally:
        if driver:
            driver.quit()
        fleet.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["device", "fleet"])
    parser.add_argument("--binary", default=".build/release/motion-agent")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--start-rate", type=float, default=20)
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--tls", action="store_true", help="device: the console serves HTTPS (a test certificate)")
    arguments = parser.parse_args()
    {"device": device, "fleet": fleet_view}[arguments.mode](arguments)
