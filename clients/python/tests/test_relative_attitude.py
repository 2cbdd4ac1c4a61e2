"""Relative attitude (Core Motion's multiply(byInverseOf:)): the client's reference⁻¹ ⊗ attitude on rotations with a
known answer, against the agent's pinned JSON (Tests/MotionWireTests/RelativeAttitudeGoldenTests.swift), and the
schemas of the payload field, the status entry and the two commands."""

from __future__ import annotations

import copy
import math

import pytest
from test_schemas import BIRTH, MOTION, invalid, valid

from motion_agent_client import multiply_by_inverse_of, relative_attitude


def q(w: float, x: float, y: float, z: float) -> dict[str, float]:
    return {"w": w, "x": x, "y": y, "z": z}


def product(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """Hamilton a ⊗ b, written out independently of the client."""
    return q(
        a["w"] * b["w"] - a["x"] * b["x"] - a["y"] * b["y"] - a["z"] * b["z"],
        a["w"] * b["x"] + a["x"] * b["w"] + a["y"] * b["z"] - a["z"] * b["y"],
        a["w"] * b["y"] - a["x"] * b["z"] + a["y"] * b["w"] + a["z"] * b["x"],
        a["w"] * b["z"] + a["x"] * b["y"] - a["y"] * b["x"] + a["z"] * b["w"],
    )


def axis_angle(x: float, y: float, z: float, angle: float) -> dict[str, float]:
    n = math.sqrt(x * x + y * y + z * z)
    s = math.sin(angle / 2) / n
    return q(math.cos(angle / 2), x * s, y * s, z * s)


def same(a: dict[str, float], b: dict[str, float], tolerance: float = 1e-12) -> bool:
    d = max(abs(a[k] - b[k]) for k in "wxyz")
    s = max(abs(a[k] + b[k]) for k in "wxyz")
    return min(d, s) < tolerance


@pytest.mark.parametrize("i", range(8))
def test_the_body_frame_change_since_the_reference_is_recovered(i):
    reference = product(axis_angle(0.2, 1, -0.4, 0.3 + i), axis_angle(1, 0, 0.5, 2.0 - 0.4 * i))
    change = axis_angle(0.3, -0.8, 0.5, 0.1 + 0.2 * i)
    assert same(multiply_by_inverse_of(product(reference, change), reference), change)


def test_an_upright_reference_turned_about_the_vertical_reports_roll():
    # Pitch 90° (the top edge up), then 40° about the world's vertical: a turn about the device's own y axis.
    reference = axis_angle(1, 0, 0, math.pi / 2)
    current = product(axis_angle(0, 0, 1, math.radians(40)), reference)
    r = relative_attitude({"attitude": {"quaternion": current}}, {"quaternion": reference, "time": 7.5})
    assert r["roll"] == pytest.approx(math.radians(40), abs=1e-9)
    assert r["pitch"] == pytest.approx(0, abs=1e-9) and r["yaw"] == pytest.approx(0, abs=1e-9)
    assert r["referenceTime"] == 7.5


def test_the_agents_pinned_json_is_reproduced():
    # The golden: attitude (x 0.6, w 0.8), relativeAttitude (y 0.6, w 0.8); a reference that gives it is
    # attitude ⊗ relative⁻¹.
    attitude = q(0.8, 0.6, 0, 0)
    relative = q(0.8, 0, 0.6, 0)
    reference = product(attitude, q(relative["w"], -relative["x"], -relative["y"], -relative["z"]))
    golden = {
        "quaternion": {"x": 0, "y": 0.6, "z": 0, "w": 0.8},
        "rotationMatrix": {"m11": 0.28, "m12": 0, "m13": 0.96, "m21": 0, "m22": 1, "m23": 0, "m31": -0.96, "m32": 0, "m33": 0.28},
        "roll": 1.287002, "pitch": 0, "yaw": 0, "referenceTime": 1795241100.25,
    }  # fmt: skip
    r = relative_attitude({"attitude": {"quaternion": attitude}}, {"quaternion": reference, "time": 1795241100.25})
    assert same(r["quaternion"], golden["quaternion"], 1e-12)
    for k, v in golden["rotationMatrix"].items():
        assert r["rotationMatrix"][k] == pytest.approx(v, abs=1e-7), k
    for k in ("roll", "pitch", "yaw"):
        assert r[k] == pytest.approx(golden[k], abs=1e-6), k
    assert r["referenceTime"] == golden["referenceTime"]


def test_a_zero_reference_is_refused():
    with pytest.raises(ValueError, match="non-zero norm"):
        multiply_by_inverse_of(q(1, 0, 0, 0), q(0, 0, 0, 0))


RELATIVE = {
    "quaternion": {"x": 0, "y": 0.6, "z": 0, "w": 0.8},
    "rotationMatrix": {"m11": 0.28, "m12": 0, "m13": 0.96, "m21": 0, "m22": 1, "m23": 0, "m31": -0.96, "m32": 0, "m33": 0.28},
    "roll": 1.287002, "pitch": 0, "yaw": 0, "referenceTime": 1795241100.25,
}  # fmt: skip


def test_the_payload_field_validates_and_near_misses_do_not():
    valid("device-motion", {**MOTION, "relativeAttitude": RELATIVE})
    valid("device-motion", {"batch": [MOTION, {**MOTION, "seq": 2, "relativeAttitude": RELATIVE}]})
    missing = {k: v for k, v in RELATIVE.items() if k != "referenceTime"}
    invalid("device-motion", {**MOTION, "relativeAttitude": missing}, "referenceTime")
    invalid("device-motion", {**MOTION, "relativeAttitude": {**RELATIVE, "heading": 1}}, "Additional properties")
    invalid("device-motion", {**MOTION, "relativeAttitude": {**RELATIVE, "roll": 4}}, "maximum")


def test_the_status_shows_the_reference():
    birth = copy.deepcopy(BIRTH)
    birth["streams"]["device-motion"]["referenceAttitude"] = {"quaternion": q(0.7071068, 0, 0, 0.7071068), "time": 1795241100.25}
    valid("status", birth)
    birth["streams"]["device-motion"]["referenceAttitude"] = {"quaternion": q(0.7071068, 0, 0, 0.7071068)}
    invalid("status", birth, "time")
    other = copy.deepcopy(BIRTH)
    other["streams"]["gyroscope"]["referenceAttitude"] = {"quaternion": q(1, 0, 0, 0), "time": 1}
    invalid("status", other, "")


def test_the_commands_validate_and_near_misses_do_not():
    valid("control", {"id": "1", "command": "set-reference-attitude"})
    valid("control", {"id": "2", "command": "set-reference-attitude", "w": 0.7071068, "x": 0, "y": 0, "z": 0.7071068})
    valid("control", {"id": "3", "command": "clear-reference-attitude"})
    invalid("control", {"id": "4", "command": "set-reference-attitude", "w": 1, "x": 0}, "")
    invalid("control", {"id": "5", "command": "set-reference-attitude", "w": "1", "x": 0, "y": 0, "z": 0}, "")
    invalid("control", {"id": "6", "command": "clear-reference-attitude", "w": 1}, "")
