"""The decoder against hand-built payloads: binary batches written byte by byte as MotionWire's
BinaryBatchWriter.swift writes them, JSON as the agent writes it, and every way a payload can be truncated or corrupt."""

from __future__ import annotations

import json
import math
import struct

import pytest
from conftest import header, motion_record, raw_record

from motion_agent_client import decode, parse_binary_batch, samples, topic_kind

ACCEL = "motion/imu-17/accelerometer"
MOTION = "motion/imu-17/device-motion"


def f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


# MARK: - JSON


def test_a_json_sample_decodes_to_its_dict():
    payload = b'{"seq":812,"timestamp":5123.456789,"time":1763700000.123456,"acceleration":{"x":0.012345,"y":-0.003211,"z":-0.998871}}'
    decoded = decode(ACCEL, payload)
    assert decoded == {
        "seq": 812,
        "timestamp": 5123.456789,
        "time": 1763700000.123456,
        "acceleration": {"x": 0.012345, "y": -0.003211, "z": -0.998871},
    }
    assert samples(ACCEL, payload) == [decoded]


def test_a_json_batch_decodes_to_the_wrapper_and_samples_unwraps_it():
    batch = [{"seq": s, "timestamp": s / 100, "time": 1.7e9 + s / 100, "acceleration": {"x": 0, "y": 0, "z": -1}} for s in (5, 6, 7)]
    payload = json.dumps({"batch": batch}, separators=(",", ":")).encode()
    assert decode(ACCEL, payload) == {"batch": batch}
    assert samples(ACCEL, payload) == batch


def test_status_metrics_and_replies_come_back_as_dicts():
    assert decode("motion/a/status", b'{"state":"offline","reason":"connection lost"}')["state"] == "offline"
    assert samples("motion/a/control/reply", b'{"code":200}') == [{"code": 200}]


# MARK: - Binary batches


@pytest.mark.parametrize(
    ("kind", "topic", "field"),
    [
        (1, "motion/d/accelerometer", "acceleration"),
        (2, "motion/d/gyroscope", "rotationRate"),
        (3, "motion/d/magnetometer", "magneticField"),
    ],
)
def test_a_hand_built_raw_batch_decodes_with_the_json_field_names(kind, topic, field):
    records = [
        (100.000001, 1763700000.000001, 0.0123, -0.5, -0.99),
        (100.020001, 1763700000.020001, 0.0125, -0.25, -1.01),
        (100.040001, 1763700000.040001, 21.4, -1.6, -44.0),
    ]
    payload = header(kind, len(records), 41) + b"".join(raw_record(*r) for r in records)
    assert len(payload) == 16 + 3 * 28
    decoded = decode(topic, payload)
    assert [s["seq"] for s in decoded] == [41, 42, 43]
    for sample, (timestamp, time, x, y, z) in zip(decoded, records):
        assert set(sample) == {"seq", "timestamp", "time", field}
        assert sample["timestamp"] == timestamp  # f64: exact
        assert sample["time"] == time
        assert sample[field] == {"x": f32(x), "y": f32(y), "z": f32(z)}
    batch = parse_binary_batch(payload, topic)
    assert (batch.version, batch.kind, batch.first_seq, batch.count) == (1, kind, 41, 3)


def test_a_hand_built_device_motion_batch_decodes_with_derived_matrix_and_angles():
    # 30° about x: pitch 30°, roll and yaw 0; gravity in device axes −(m31, m32, m33).
    half = math.radians(30) / 2
    q = (math.sin(half), 0.0, 0.0, math.cos(half))
    gravity = (0.0, -0.5, -math.sqrt(3) / 2)
    first = motion_record(7.5, 1763700000.5, q, (0.01, 0.02, 0.03), gravity, (0.1, 0.2, 0.3), (16.0, 8.1, -46.6), 123.456, 3, 2)
    second = motion_record(7.52, 1763700000.52, (0.0, 0.0, 0.0, 1.0), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1.0, 0, 0)
    payload = header(4, 2, 1000) + first + second
    assert len(payload) == 16 + 2 * 88
    one, two = decode(MOTION, payload)

    assert one["seq"] == 1000 and two["seq"] == 1001
    assert one["timestamp"] == 7.5 and one["time"] == 1763700000.5
    attitude = one["attitude"]
    assert attitude["quaternion"] == {"x": f32(q[0]), "y": 0.0, "z": 0.0, "w": f32(q[3])}
    assert attitude["pitch"] == pytest.approx(math.radians(30), abs=1e-6)
    assert attitude["roll"] == pytest.approx(0, abs=1e-6)
    assert attitude["yaw"] == pytest.approx(0, abs=1e-6)
    m = attitude["rotationMatrix"]
    assert m["m11"] == pytest.approx(1, abs=1e-6)
    assert m["m22"] == pytest.approx(math.cos(math.radians(30)), abs=1e-6)
    assert m["m32"] == pytest.approx(0.5, abs=1e-6)
    assert (-m["m31"], -m["m32"], -m["m33"]) == pytest.approx(gravity, abs=1e-6)
    assert one["gravity"] == {"x": 0.0, "y": f32(-0.5), "z": f32(-math.sqrt(3) / 2)}
    assert one["rotationRate"] == {"x": f32(0.01), "y": f32(0.02), "z": f32(0.03)}
    assert one["userAcceleration"] == {"x": f32(0.1), "y": f32(0.2), "z": f32(0.3)}
    assert one["magneticField"] == {"field": {"x": 16.0, "y": f32(8.1), "z": f32(-46.6)}, "accuracy": "high"}
    assert one["heading"] == f32(123.456)
    assert one["referenceFrame"] == "xMagneticNorthZVertical"

    assert two["attitude"]["rotationMatrix"] == {f"m{r}{c}": float(r == c) for r in (1, 2, 3) for c in (1, 2, 3)}
    assert two["heading"] == -1.0
    assert two["magneticField"]["accuracy"] == "uncalibrated"
    assert two["referenceFrame"] == "xArbitraryZVertical"


def test_the_documented_example_quaternion_gives_the_documented_matrix_and_angles():
    # docs/payloads.md's device-motion example: quaternion → rotationMatrix and roll, pitch, yaw.
    q = (0.2834262, 0.0711867, 0.0211022, 0.9561155)
    payload = header(4, 1, 1) + motion_record(1, 2, q, (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, 0, 0)
    attitude = decode(MOTION, payload)[0]["attitude"]
    m = attitude["rotationMatrix"]
    assert (m["m11"], m["m12"], m["m13"], m["m21"]) == pytest.approx((0.9889743, 0, 0.1480872, 0.0807047), abs=2e-6)
    assert (attitude["roll"], attitude["pitch"]) == pytest.approx((0.15, 0.57), abs=0.01)
    # The example's "yaw":0.04 and gravity x −0.14 do not follow from its quaternion: m12 = 0 gives yaw 0, and
    # gravity = −(m31, m32, m33) = (0.124, −0.545, −0.829). The matrix, roll and pitch do.
    assert attitude["yaw"] == pytest.approx(0, abs=1e-6)
    assert (-m["m31"], -m["m32"], -m["m33"]) == pytest.approx((0.124, -0.545, -0.829), abs=1e-3)


@pytest.mark.parametrize(("accuracy", "name"), list(enumerate(["uncalibrated", "low", "medium", "high"])))
def test_every_accuracy_byte(accuracy, name):
    payload = header(4, 1, 1) + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, accuracy, 0)
    assert decode(MOTION, payload)[0]["magneticField"]["accuracy"] == name


@pytest.mark.parametrize(
    ("frame", "name"),
    list(enumerate(["xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical", "xTrueNorthZVertical"])),
)
def test_every_reference_frame_byte(frame, name):
    payload = header(4, 1, 1) + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, 0, frame)
    assert decode(MOTION, payload)[0]["referenceFrame"] == name


def test_non_finite_floats_become_none_like_json_null():
    payload = header(1, 1, 1) + raw_record(1, 2, float("nan"), float("inf"), 0.5)
    assert decode(ACCEL, payload)[0]["acceleration"] == {"x": None, "y": None, "z": 0.5}


def test_an_empty_batch_and_the_largest_batch():
    assert decode(ACCEL, header(1, 0, 1)) == []
    payload = header(1, 1000, 2**40) + raw_record(1, 2, 0, 0, -1) * 1000
    decoded = decode(ACCEL, payload)
    assert len(decoded) == 1000 and decoded[0]["seq"] == 2**40 and decoded[-1]["seq"] == 2**40 + 999


def test_without_a_topic_the_header_decides():
    payload = header(2, 1, 9) + raw_record(1, 2, 0.1, 0.2, 0.3)
    assert set(decode(None, payload)[0]) == {"seq", "timestamp", "time", "rotationRate"}


# MARK: - Truncated and corrupt input


GOOD_RAW = header(1, 2, 1) + raw_record(1, 2, 0, 0, -1) + raw_record(1.01, 2.01, 0, 0, -1)
GOOD_MOTION = header(4, 1, 1) + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, 0, 0)


@pytest.mark.parametrize(
    ("topic", "payload", "message"),
    [
        (ACCEL, b"", r"motion/imu-17/accelerometer: empty payload"),
        (ACCEL, b"MAB\x01\x01", r"truncated binary batch: 5 bytes, shorter than the 16-byte MAB header"),
        (ACCEL, GOOD_RAW[:15], r"truncated binary batch: 15 bytes"),
        (ACCEL, b"MAX" + GOOD_RAW[3:], r"not a binary batch: the magic is b'MAX', expected b'MAB'"),
        (ACCEL, header(1, 2, 1, version=2) + GOOD_RAW[16:], r"unsupported binary batch version 2: this client reads version 1"),
        (ACCEL, header(0, 2, 1) + GOOD_RAW[16:], r"unknown binary batch kind 0 \(known: 1 accelerometer, 2 gyroscope, 3 magnetometer, 4 device-motion\)"),
        (None, header(5, 2, 1) + GOOD_RAW[16:], r"unknown binary batch kind 5"),
        (ACCEL, header(1, 2, 1, reserved=7) + GOOD_RAW[16:], r"reserved byte 5 is 7, must be 0"),
        (ACCEL, header(1, 2, 0) + GOOD_RAW[16:], r"the first seq is 0, but seq counts from 1"),
        (ACCEL, GOOD_RAW[:-1], r"truncated: the header announces 2 accelerometer records of 28 bytes \(72 bytes with the header\), the payload has 71 bytes"),
        (ACCEL, header(1, 3, 1) + GOOD_RAW[16:], r"truncated: the header announces 3 accelerometer records"),
        (ACCEL, GOOD_RAW + b"\x00", r"trailing bytes after the records: the header announces 2 accelerometer records of 28 bytes"),
        (MOTION, GOOD_MOTION[:-10], r"truncated: the header announces 1 device-motion records of 88 bytes \(104 bytes with the header\), the payload has 94"),
        (MOTION, header(4, 1, 1) + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, 4, 0), r"record 0 \(seq 1\): magnetic accuracy byte 4 is not 0–3"),
        (MOTION, header(4, 1, 5) + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, 0, 9), r"record 0 \(seq 5\): reference frame byte 9 is not 0–3"),
        (MOTION, header(4, 1, 1) + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, 0, 0, reserved=b"\x01\x00"), r"reserved bytes are 0x0001, must be 0"),
        ("motion/imu-17/gyroscope", GOOD_RAW, r"binary batch of kind 1 \(accelerometer\) on a gyroscope topic"),
        (ACCEL, GOOD_MOTION, r"binary batch of kind 4 \(device-motion\) on a accelerometer topic"),
        ("motion/imu-17/status", GOOD_RAW, r"on a status topic: only accelerometer, gyroscope, magnetometer, device-motion publish binary batches"),
        (ACCEL, b'{"seq":1,', r"accelerometer: payload is not valid JSON"),
        (ACCEL, b'{"x":NaN}', r"NaN is not JSON"),
        (ACCEL, b'{"x":"\xff"}', r"payload is not UTF-8"),
        (ACCEL, b"[1,2]", r"neither a JSON object \(first byte '\{'\) nor a binary batch"),
        (ACCEL, b"\x00\x01", r"neither a JSON object"),
    ],
)
def test_truncated_and_corrupt_payloads_are_refused_with_a_reason(topic, payload, message):
    with pytest.raises(ValueError, match=message):
        decode(topic, payload)


def test_a_json_value_that_is_not_an_object_is_refused():
    from motion_agent_client import decode_json

    with pytest.raises(ValueError, match="payload is JSON but not an object: list"):
        decode_json(b"[1]", ACCEL)


def test_payloads_must_be_bytes():
    with pytest.raises(TypeError, match="payload must be bytes, not str"):
        decode(ACCEL, '{"seq":1}')


# MARK: - Topics


@pytest.mark.parametrize(
    ("topic", "kind"),
    [
        ("motion/imu-17/accelerometer", "accelerometer"),
        ("motion/imu-17/device-motion", "device-motion"),
        ("motion/imu-17/pedometer", "pedometer"),
        ("motion/imu-17/pedometer/events", "pedometer/events"),
        ("motion/imu-17/altimeter", "altimeter"),
        ("motion/imu-17/altimeter/absolute", "altimeter/absolute"),
        ("site/a/b/imu-17/status", "status"),
        ("motion/imu-17/metrics", "metrics"),
        ("motion/imu-17/control", "control"),
        ("motion/imu-17/control/reply", "control/reply"),
        ("motion/fleet/control", "control"),
        ("motion/imu-17/elsewhere", None),
        ("motion/imu-17/accelerometers", None),
    ],
)
def test_topic_kinds(topic, kind):
    assert topic_kind(topic) == kind
