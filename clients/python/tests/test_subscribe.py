"""The subscriber example against a real mosquitto (installed by scripts/test.sh; a missing one fails, it
does not skip): retained JSON and binary messages come out decoded, one line each or one line per sample."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import paho.mqtt.client as mqtt
import pytest
from conftest import CLIENT, header, raw_record

from motion_agent_client.subscribe import format_message

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def broker(tmp_path):
    assert os.access(MOSQUITTO, os.X_OK), "mosquitto is not installed: apt-get install mosquitto (bash scripts/test.sh does)"
    port = free_port()
    config = tmp_path / "mosquitto.conf"
    lines = [f"listener {port} 127.0.0.1", "allow_anonymous true", "persistence false", "log_dest stderr"]
    if os.geteuid() == 0:
        lines.append("user root")  # as root mosquitto would switch to a user that cannot read tmp_path
    config.write_text("\n".join(lines) + "\n")
    process = subprocess.Popen([MOSQUITTO, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"mosquitto exited: {process.stderr.read().decode()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        process.kill()
        raise AssertionError(f"mosquitto did not listen on 127.0.0.1:{port} within 10 s")
    yield port
    process.terminate()
    process.wait(timeout=10)


def publish_retained(port: int, messages: list[tuple[str, bytes]]) -> None:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", port)
    client.loop_start()
    for topic, payload in messages:
        client.publish(topic, payload, qos=1, retain=True).wait_for_publish(timeout=5)
    client.disconnect()
    client.loop_stop()


BATCH = header(1, 2, 7) + raw_record(1.0, 1763700000.0, 0.0, 0.0, -1.0) + raw_record(1.02, 1763700000.02, 0.0, 0.5, -1.0)
STATUS = b'{"state":"offline","reason":"connection lost","bootCount":3}'


def run_subscriber(port: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "motion_agent_client.subscribe", "--host", "127.0.0.1", "--port", str(port), "--timeout", "15", *extra, "imu-9"],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_subscriber_prints_decoded_messages(broker):
    publish_retained(broker, [("motion/imu-9/status", STATUS), ("motion/imu-9/accelerometer", BATCH), ("motion/other/status", STATUS)])
    result = run_subscriber(broker, "--count", "2")
    assert result.returncode == 0, result.stderr
    lines = sorted(result.stdout.splitlines())
    assert len(lines) == 2, result.stdout
    topic, _, body = lines[0].partition(" ")
    assert topic == "motion/imu-9/accelerometer"
    assert [s["seq"] for s in json.loads(body)] == [7, 8]
    assert json.loads(body)[1]["acceleration"] == {"x": 0.0, "y": 0.5, "z": -1.0}
    assert lines[1] == 'motion/imu-9/status {"state":"offline","reason":"connection lost","bootCount":3}'


def test_one_line_per_sample_and_undecodable_payloads_on_stderr(broker):
    publish_retained(broker, [("motion/imu-9/accelerometer", BATCH), ("motion/imu-9/gyroscope", b"MAB\x01")])
    result = run_subscriber(broker, "--samples", "--count", "2")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line.split(" ", 1)[1])["seq"] for line in result.stdout.splitlines()] == [7, 8]
    assert "motion/imu-9/gyroscope: truncated binary batch: 4 bytes" in result.stderr


def test_too_few_messages_before_the_timeout_is_exit_status_2(broker):
    result = run_subscriber(broker, "--count", "1", "--timeout", "1")
    assert result.returncode == 2
    assert "0 message(s) on motion/imu-9/# within 1.0 s" in result.stderr


def test_no_broker_is_exit_status_1_with_the_fix():
    result = run_subscriber(free_port(), "--count", "1")
    assert result.returncode == 1
    assert "check --host and --port, or that the broker is running" in result.stderr


def test_format_message():
    assert format_message("motion/a/status", STATUS) == ['motion/a/status {"state":"offline","reason":"connection lost","bootCount":3}']
    assert len(format_message("motion/a/accelerometer", BATCH, one_per_sample=True)) == 2
