"""Device motion's binary layout version 2 (120-byte records): the attitude accuracies and the relative attitude,
decoded from hand-built bytes and from the bytes MotionWire's golden test pins (BinaryBatchGoldenTests.swift), with
the −1 rule, and every way a version-2 batch can be corrupt or from a version this client does not read."""

from __future__ import annotations

import math
import struct

import pytest
from conftest import header, motion_record, motion_record_v2
from test_schemas import schemas

from motion_agent_client import BINARY_VERSION, BINARY_VERSIONS, decode, parse_binary_batch

MOTION = "motion/imu-17/device-motion"
NORTH = 2  # xMagneticNorthZVertical
ARBITRARY = 0  # xArbitraryZVertical


def f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


# BinaryBatchGoldenTests.swift's pinned output of BinaryBatchWriter, hex, with a relative attitude:
# reference⁻¹ ⊗ attitude = (x 0, y 0.6, z 0, w 0.8), set at 1795241100.25; accuracies 0.5° and 1.875°.
SWIFT_GOLDEN = bytes.fromhex(
    "4d414202040001000100000000000000"
    "000000000000f03f" "0000000000000040"
    "9a99193f" "00000000" "00000000" "cdcc4c3f"
    "0000803f" "00000040" "00004040"
    "00000000" "00000000" "000080bf"
    "0000003f" "00000000" "00000000"
    "00008041" "00000041" "000038c2"
    "0000b442"
    "02" "03" "01" "00"
    "0000003f" "0000f03f"
    "00000000" "9a99193f" "00000000" "cdcc4c3f"
    "000010234dc0da41"
)


def test_the_versions_this_client_reads():
    assert BINARY_VERSION == 2
    assert BINARY_VERSIONS == {1: (1,), 2: (1,), 3: (1,), 4: (1, 2)}


def test_the_swift_writers_golden_bytes_decode_to_the_agents_values():
    batch = parse_binary_batch(SWIFT_GOLDEN, MOTION)
    assert (batch.version, batch.kind, batch.first_seq, batch.count) == (2, 4, 1, 1)
    (s,) = batch.samples
    assert (s["seq"], s["timestamp"], s["time"]) == (1, 1.0, 2.0)
    assert s["inclinationAccuracy"] == 0.5 and s["headingAccuracy"] == 1.875
    assert s["heading"] == 90.0 and s["referenceFrame"] == "xTrueNorthZVertical"
    assert s["magneticField"] == {"field": {"x": 16.0, "y": 8.0, "z": -46.0}, "accuracy": "medium"}
    r = s["relativeAttitude"]
    assert r["quaternion"] == {"x": 0.0, "y": f32(0.6), "z": 0.0, "w": f32(0.8)}
    assert r["referenceTime"] == 1795241100.25
    # The agent's JSON for this relative attitude (RelativeAttitudeGoldenTests.swift): m13 0.96, m31 −0.96,
    # roll 1.287002, pitch and yaw 0 — here from float32 inputs.
    m = r["rotationMatrix"]
    assert (m["m11"], m["m13"], m["m31"], m["m33"], m["m22"]) == pytest.approx((0.28, 0.96, -0.96, 0.28, 1), abs=1e-6)
    assert (r["roll"], r["pitch"], r["yaw"]) == pytest.approx((1.287002, 0, 0), abs=1e-6)
    assert not schemas.sample_errors("device-motion", s)


def test_exact_accuracies_and_no_relative_attitude_without_a_reference():
    payload = header(4, 2, 40, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), 12.5, 3, NORTH, 0.412, 1.873) + motion_record_v2(
        1.01, 2.01, (0, 0, 0, 1), 12.5, 3, NORTH, 37.25, 180
    )
    assert len(payload) == 16 + 2 * 120
    one, two = decode(MOTION, payload)
    assert (one["inclinationAccuracy"], one["headingAccuracy"]) == (f32(0.412), f32(1.873))
    assert (two["inclinationAccuracy"], two["headingAccuracy"]) == (37.25, 180.0)
    assert "relativeAttitude" not in one and "relativeAttitude" not in two
    assert (one["seq"], two["seq"]) == (40, 41)
    for s in (one, two):
        assert not schemas.sample_errors("device-motion", s), s


def test_minus_one_is_none_and_travels_exactly():
    # The heading accuracy is −1 in xArbitraryZVertical (its 6-axis yaw is kept in check by nothing).
    payload = header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), -1, 0, ARBITRARY, 2.5, -1)
    (s,) = decode(MOTION, payload)
    assert s["headingAccuracy"] == -1.0 and s["heading"] == -1.0
    assert s["inclinationAccuracy"] == 2.5
    assert not schemas.sample_errors("device-motion", s)
    # An inclination accuracy of −1 (none) comes through as −1 too; the schema refuses it, as it does in JSON,
    # because the agent always has one.
    payload = header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), -1, 0, ARBITRARY, -1, -1)
    (s,) = decode(MOTION, payload)
    assert s["inclinationAccuracy"] == -1.0
    assert any("inclinationAccuracy" in e for e in schemas.sample_errors("device-motion", s))


def test_the_relative_attitude_flag_is_per_record():
    half = math.radians(40) / 2
    relative = (0.0, math.sin(half), 0.0, math.cos(half))  # 40° about the device's y axis: roll 40°
    payload = (
        header(4, 3, 7, version=2)
        + motion_record_v2(1, 2, (0, 0, 0, 1), 10, 3, NORTH, 0.3, 1.2)
        + motion_record_v2(1.01, 2.01, (0, 0, 0, 1), 10, 3, NORTH, 0.3, 1.2, relative, 1795241100.125)
        + motion_record_v2(1.02, 2.02, (0, 0, 0, 1), 10, 3, NORTH, 0.3, 1.2)
    )
    before, during, after = decode(MOTION, payload)
    assert "relativeAttitude" not in before and "relativeAttitude" not in after
    r = during["relativeAttitude"]
    assert r["referenceTime"] == 1795241100.125
    assert r["roll"] == pytest.approx(math.radians(40), abs=1e-6)
    assert (r["pitch"], r["yaw"]) == pytest.approx((0, 0), abs=1e-6)
    assert not schemas.sample_errors("device-motion", during)


def test_version_1_device_motion_still_decodes_without_the_new_fields():
    payload = header(4, 1, 1) + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (20, 0, -40), 10, 3, NORTH)
    batch = parse_binary_batch(payload, MOTION)
    assert batch.version == 1
    (s,) = batch.samples
    assert not {"inclinationAccuracy", "headingAccuracy", "relativeAttitude"} & set(s)
    assert not schemas.sample_errors("device-motion", s)


GOOD_V2 = header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), 10, 3, NORTH, 0.3, 1.2)
WITH_REFERENCE = header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), 10, 3, NORTH, 0.3, 1.2, (0, 0, 0, 1), 5.0)


@pytest.mark.parametrize(
    ("topic", "payload", "message"),
    [
        (MOTION, header(4, 1, 1, version=3) + GOOD_V2[16:],
         r"unsupported binary batch version 3: this client reads versions 1 and 2 of device-motion batches \(a newer agent's layout: update motion_agent_client, or set the stream's encoding to json\)"),
        (MOTION, header(4, 1, 1, version=0) + GOOD_V2[16:], r"unsupported binary batch version 0: this client reads versions 1 and 2 of device-motion batches$"),
        ("motion/d/gyroscope", header(2, 0, 1, version=2), r"unsupported binary batch version 2: this client reads version 1 of gyroscope batches \(a newer"),
        # 120-byte records under a version-1 header, and 88-byte ones under version 2: the length gives it away.
        (MOTION, header(4, 1, 1) + GOOD_V2[16:], r"trailing bytes after the records: the header announces 1 device-motion records of 88 bytes \(104 bytes with the header\), the payload has 136"),
        (MOTION, GOOD_V2[:16] + motion_record(1, 2, (0, 0, 0, 1), (0, 0, 0), (0, 0, -1), (0, 0, 0), (0, 0, 0), -1, 0, 0), r"truncated: the header announces 1 device-motion records of 120 bytes \(136 bytes with the header\), the payload has 104"),
        (MOTION, GOOD_V2[:-1], r"truncated: the header announces 1 device-motion records of 120 bytes"),
        (MOTION, header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), 10, 3, NORTH, 0.3, 1.2, flags=2), r"record 0 \(seq 1\): flags byte 0x02 sets bits other than bit 0"),
        (MOTION, header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), 10, 3, NORTH, 0.3, 1.2, reserved=9), r"record 0 \(seq 1\): reserved byte 87 is 9, must be 0"),
        (MOTION, GOOD_V2[:-1] + b"\x01", r"relative attitude bytes 96–119 are not all 0 while its flag \(bit 0\) is clear"),
        (MOTION, WITH_REFERENCE[:16 + 86] + b"\x00" + WITH_REFERENCE[16 + 87:], r"relative attitude bytes 96–119 are not all 0"),
        (MOTION, header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), 10, 4, NORTH, 0.3, 1.2), r"magnetic accuracy byte 4 is not 0–3"),
        (MOTION, header(4, 1, 1, version=2) + motion_record_v2(1, 2, (0, 0, 0, 1), 10, 3, 4, 0.3, 1.2), r"reference frame byte 4 is not 0–3"),
    ],
)  # fmt: skip
def test_corrupt_or_unknown_version_2_batches_are_refused_with_a_reason(topic, payload, message):
    with pytest.raises(ValueError, match=message):
        decode(topic, payload)


def test_the_good_ones_decode():
    assert len(decode(MOTION, GOOD_V2)) == 1
    assert decode(MOTION, WITH_REFERENCE)[0]["relativeAttitude"]["referenceTime"] == 5.0
