"""Real parts for the console's browser tests, screenshots and figures: a mosquitto on a free loopback port, real
`motion-agent` processes on the simulated IMU, the real `motion-agent console`, and headless Chromium (Debian's
chromium and chromium-driver) driven by selenium. Everything runs on 127.0.0.1 and is stopped by `close()`."""

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

STREAMS = ["accelerometer", "gyroscope", "magnetometer", "device-motion", "pedometer", "activity", "altimeter",
           "submersion"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout=30.0, interval=0.1):
    """Polls `check` until it returns a true value (returned), or fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as error:  # the page may be between states
            last = error
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise AssertionError(f"waited {timeout} s for {what}; last: {last!r}")


class Fleet:
    """A broker, agents and the console, in one temporary directory."""

    def __init__(self, binary):
        self.binary = os.path.abspath(binary)
        if not os.access(self.binary, os.X_OK):
            raise AssertionError(f"{self.binary} is not an executable motion-agent: build it first (swift build)")
        self.directory = tempfile.mkdtemp(prefix="motion-console-")
        self.processes = {}
        self.port = None
        self.console_url = None
        self.console_token = None

    def start_broker(self):
        mosquitto = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not os.path.exists(mosquitto):
            raise AssertionError("mosquitto is not installed: apt-get install mosquitto")
        self.port = free_port()
        conf = os.path.join(self.directory, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    "max_queued_messages 100000\n")
        self._spawn("mosquitto", [mosquitto, "-c", conf])
        wait_for("mosquitto to listen", lambda: _port_open(self.port), timeout=10)
        self._broker_command = [mosquitto, "-c", conf]

    def restart_broker(self, down_seconds=1.0):
        """A broker outage: mosquitto killed, then started again on the same port (its retained store is gone)."""
        process = self.processes.pop("mosquitto")
        process.kill()
        process.wait(timeout=10)
        time.sleep(down_seconds)  # the outage itself, not a wait for anything to happen
        self._spawn("mosquitto", self._broker_command)
        wait_for("mosquitto to listen again", lambda: _port_open(self.port), timeout=10)

    def agent_config(self, device, scenario="stationary", rate_hz=50, streams=None, groups=(), metrics_s=5,
                     hardware_hz=100):
        """config.yaml of an agent: the simulated IMU, the given streams (name → YAML flow mapping), the rest off."""
        streams = streams or {}
        directory = os.path.join(self.directory, "agents", device.replace("/", "_"))
        os.makedirs(os.path.join(directory, "state"), exist_ok=True)
        lines = ["device:", f"  id: {json.dumps(device)}", "agent:", f"  state_dir: {directory}/state",
                 "  log_level: warning", "source:", "  kind: simulated", "  simulated:", f"    scenario: {scenario}",
                 f"    rate_hz: {hardware_hz}", "mqtt:", "  host: 127.0.0.1", f"  port: {self.port}",
                 "control:", "  persist: false", f"  groups: [{', '.join(groups)}]", "metrics:",
                 f"  interval_s: {metrics_s}", "streams:"]
        for name in STREAMS:
            lines.append(f"  {name}: {streams.get(name, '{enabled: false}')}")
        path = os.path.join(directory, "config.yaml")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def start_agent(self, device, **options):
        config = self.agent_config(device, **options)
        self._spawn("agent " + device, [self.binary, "run", "--config", config])

    def stop_agent(self, device, sig=signal.SIGKILL):
        process = self.processes.pop("agent " + device)
        process.send_signal(sig)
        process.wait(timeout=10)

    def start_console(self, *arguments, name="console"):
        self.console_port = free_port()
        log = open(os.path.join(self.directory, name + ".log"), "w")
        process = subprocess.Popen(
            [self.binary, "console", "--port", str(self.port), "--listen", f"127.0.0.1:{self.console_port}",
             *arguments],
            stdout=subprocess.PIPE, stderr=log, text=True)
        self.processes[name] = process
        line = process.stdout.readline()
        match = re.search(r"(https?://\S+)/\?token=(\S+)", line)
        if not match:
            raise AssertionError(f"the console printed no address: {line!r} (see {log.name})")
        self.console_url, self.console_token = match.group(1), match.group(2)
        return process

    def test_certificate(self):
        """A self-signed certificate for 127.0.0.1 (openssl from Debian): its PEM file, its key's, and the base64
        SHA-256 of its public key, which `browser(trust_spki=…)` accepts."""
        certificate, key = os.path.join(self.directory, "cert.pem"), os.path.join(self.directory, "key.pem")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=30)
        public_key = subprocess.run(["openssl", "x509", "-in", certificate, "-noout", "-pubkey"],
                                    check=True, capture_output=True, timeout=30).stdout
        der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public_key,
                             check=True, capture_output=True, timeout=30).stdout
        return certificate, key, base64.b64encode(hashlib.sha256(der).digest()).decode()

    def publish(self, topic, payload, retain=True):
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-q", "1"] +
                       (["-r"] if retain else []) + ["-t", topic, "-m", payload], check=True, timeout=10)

    def _spawn(self, name, command):
        log = open(os.path.join(self.directory, name.replace(" ", "-").replace("/", "_") + ".log"), "w")
        self.processes[name] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    def close(self):
        # The console and the agents before the broker, so that nothing reconnects in a loop.
        for name in sorted(self.processes, key=lambda n: n == "mosquitto"):
            process = self.processes[name]
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()
        shutil.rmtree(self.directory, ignore_errors=True)


def _port_open(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def browser(width=1400, height=1000, trust_spki=None, profile=None):
    """Headless Chromium from Debian, through Debian's chromedriver. `trust_spki`: the base64 SHA-256 of a
    certificate's public key the browser accepts for HTTPS (a test's self-signed one; it needs `profile`, a
    user data directory)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for path in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not os.path.exists(path):
            raise AssertionError(f"{path} is missing: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    if trust_spki:
        options.add_argument(f"--ignore-certificate-errors-spki-list={trust_spki}")
        options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def probe(driver, expression="window.consoleProbe"):
    return driver.execute_script(f"return {expression};")


def process_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def process_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0
