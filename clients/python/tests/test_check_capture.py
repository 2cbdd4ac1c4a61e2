"""The capture checker itself: it passes a clean capture, and names what is wrong in a bad one — so the
end-to-end test cannot pass by checking nothing."""

from __future__ import annotations

import base64
import json

import check_capture
from conftest import SCHEMAS, header, motion_record, raw_record


def capture(tmp_path, messages):
    path = tmp_path / "capture.json"
    path.write_text(json.dumps({
        "capturedAt": 1763700000,
        "messages": [{"topic": t, "payload": base64.b64encode(p).decode(), "qos": 0, "retain": False} for t, p in messages],
    }))  # fmt: skip
    return path


def sample(seq, t=1.0):
    return {"seq": seq, "timestamp": t, "time": 1763700000 + t, "acceleration": {"x": 0, "y": 0, "z": -1}}


def run(path, *extra):
    return check_capture.main([str(path), "--schemas", str(SCHEMAS), *extra])


def test_a_clean_capture_passes(tmp_path, capsys):
    batch = header(1, 2, 3) + raw_record(1.02, 1763700001.02, 0, 0, -1) + raw_record(1.03, 1763700001.03, 0, 0, -1)
    path = capture(tmp_path, [
        ("motion/d/accelerometer", json.dumps(sample(1, 1.0)).encode()),
        ("motion/d/accelerometer", json.dumps({"batch": [sample(2, 1.01)]}).encode()),
        ("motion/d/accelerometer", batch),
        ("motion/d/control", b'{"id":"1","command":"ping"}'),
        ("motion/d/control/reply", b'{"code":200,"device":"d","id":"1","message":"ok","ok":true,"result":{"time":1}}'),
    ])  # fmt: skip
    assert run(path) == 0, capsys.readouterr().out
    assert "all payloads match docs/schemas" in capsys.readouterr().out


def test_problems_are_named(tmp_path, capsys):
    path = capture(tmp_path, [
        ("motion/d/accelerometer", json.dumps({**sample(1), "extra": 1}).encode()),
        ("motion/d/gyroscope", json.dumps({"seq": 2, "timestamp": 1, "time": 1763700001, "rotationRate": {"x": 0, "y": 0, "z": 1e-05}}).encode()),
        ("motion/d/magnetometer", header(3, 2, 1) + raw_record(1, 2, 20, 0, -40)),
        ("motion/d/control", b'{"id":"bad-1","command":"ping"}'),
        ("motion/d/control", b'{"id":"2","command":"ping"}'),
    ])  # fmt: skip
    assert run(path) == 1
    out = capsys.readouterr().out
    assert "Additional properties are not allowed ('extra' was unexpected)" in out
    assert "exponent form ['1e-05']" in out
    assert "the first seq is 2, expected 1" in out
    assert "truncated: the header announces 2 magnetometer records" in out
    assert "bad-1 is meant to be refused, but control-request.schema.json accepts it" in out
    assert "command 2 was answered 0 times, expected exactly once" in out


def test_coverage_fails_a_capture_that_saw_little(tmp_path, capsys):
    path = capture(tmp_path, [("motion/d/accelerometer", json.dumps(sample(1)).encode())])
    assert run(path, "--require-coverage") == 1
    out = capsys.readouterr().out
    assert "no message on: gyroscope, magnetometer, device-motion" in out
    assert "accelerometer: no binary batch, no json batch" in out
    assert "no status birth, goodbye, will" in out
    assert "no binary device-motion record with the attitude accuracies (layout version 2)" in out
    assert "no binary device-motion record with a relativeAttitude" in out


def test_binary_device_motion_in_version_1_is_named(tmp_path, capsys):
    # Decodable (this client reads version 1) but not what the agent writes any more.
    record = motion_record(1, 1763700001, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (20, 0, -40), -1, 3, 0)
    path = capture(tmp_path, [("motion/d/device-motion", header(4, 1, 1) + record)])
    assert run(path) == 1
    assert "device motion in binary layout version 1: the agent writes version 2" in capsys.readouterr().out
