"""Decoding MotionAgent's MQTT payloads: JSON documents, and the binary sample batches ("MAB").

The binary layout is the one MotionWire's `BinaryBatchWriter.swift` writes and docs/payloads.md ("Batched streams") documents,
all little-endian:

    header, 16 bytes: magic b"MAB", version u8, kind u8 (1 accelerometer, 2 gyroscope, 3 magnetometer,
                      4 device-motion), reserved u8 (0), count u16, seq of the first record u64
    raw-sensor record (version 1), 28 bytes: timestamp f64 (s, sensor clock), time f64 (Unix s), x, y, z f32
    device-motion record, version 2, 120 bytes: timestamp f64, time f64, quaternion x, y, z, w f32,
                      rotationRate xyz f32, gravity xyz f32, userAcceleration xyz f32, magneticField xyz f32,
                      heading f32, accuracy u8 (0 uncalibrated … 3 high), referenceFrame u8 (0 xArbitraryZVertical,
                      1 xArbitraryCorrectedZVertical, 2 xMagneticNorthZVertical, 3 xTrueNorthZVertical),
                      flags u8 (bit 0: relative attitude present), reserved u8 (0),
                      inclinationAccuracy f32, headingAccuracy f32 (degrees, 1-σ, −1 none),
                      relative quaternion x, y, z, w f32, referenceTime f64 (Unix s) — all zero without the flag
    device-motion record, version 1 (older agents), 88 bytes: the first 88 bytes of version 2, the flags and
                      reserved bytes both 0 (no accuracies, no relative attitude)

The version numbers the record layout of the batch's kind: raw sensors are at version 1, device motion at 2
(this client also reads device motion's version 1). Any other version is refused, never guessed at.

Decoded records are dicts with the field names of the JSON samples, so code that reads one encoding reads the
other. The binary device-motion record carries no rotation matrix and no Euler angles: they are computed here
from the record's quaternion (and the relative attitude's) exactly as the agent computes them for JSON
(`RotationMatrix(q)`, `Quaternion.eulerAngles`), from float32 inputs.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BINARY_MAGIC",
    "BINARY_VERSION",
    "BINARY_VERSIONS",
    "BinaryBatch",
    "SAMPLE_STREAMS",
    "STREAMS",
    "STREAM_SCHEMAS",
    "TOPIC_KINDS",
    "decode",
    "decode_json",
    "multiply_by_inverse_of",
    "parse_binary_batch",
    "relative_attitude",
    "samples",
    "topic_kind",
]

BINARY_MAGIC = b"MAB"
#: The newest layout version this client reads (device motion's; raw sensors are still at 1).
BINARY_VERSION = 2
#: kind byte → the layout versions this client reads for it.
BINARY_VERSIONS: dict[int, tuple[int, ...]] = {1: (1,), 2: (1,), 3: (1,), 4: (1, 2)}

HEADER = struct.Struct("<3sBBBHQ")
RAW_RECORD = struct.Struct("<ddfff")
MOTION_RECORD = struct.Struct("<dd4f3f3f3f3ffBBH")
MOTION_RECORD_V2 = struct.Struct("<dd4f3f3f3f3ffBBBBff4fd")
assert HEADER.size == 16 and RAW_RECORD.size == 28 and MOTION_RECORD.size == 88 and MOTION_RECORD_V2.size == 120
#: flags bit 0 of a version-2 device-motion record: it carries a relative attitude.
RELATIVE_ATTITUDE_PRESENT = 1

#: kind byte → (stream name, the JSON field of a raw record's vector; None for device motion)
KINDS: dict[int, tuple[str, str | None]] = {
    1: ("accelerometer", "acceleration"),
    2: ("gyroscope", "rotationRate"),
    3: ("magnetometer", "magneticField"),
    4: ("device-motion", None),
}
ACCURACIES = ("uncalibrated", "low", "medium", "high")
REFERENCE_FRAMES = (
    "xArbitraryZVertical",
    "xArbitraryCorrectedZVertical",
    "xMagneticNorthZVertical",
    "xTrueNorthZVertical",
)

# BEGIN GENERATED streams: scripts/codegen/streams/generate.sh from Sources/StreamDeclarations
#: Every stream, in the agent's order (config keys, status entries).
STREAMS = (
    "accelerometer",
    "gyroscope",
    "magnetometer",
    "device-motion",
    "pedometer",
    "activity",
    "altimeter",
    "submersion",
    "events",
    "temperature",
)

#: The streams that publish one message per sample and can batch (binary batches among them).
SAMPLE_STREAMS = (
    "accelerometer",
    "gyroscope",
    "magnetometer",
    "device-motion",
)

#: Every kind of topic the agent publishes or reads, as the part after `{root}/` (multi-level ones first, so the longest
#: suffix wins). "control" is also what the group and fleet command topics are.
TOPIC_KINDS = (
    "control/reply",
    "pedometer/events",
    "altimeter/absolute",
    "accelerometer",
    "gyroscope",
    "magnetometer",
    "device-motion",
    "pedometer",
    "activity",
    "altimeter",
    "submersion",
    "events",
    "temperature",
    "status",
    "configuration",
    "metrics",
    "control",
)

#: Each stream topic's JSON Schema in docs/schemas.
STREAM_SCHEMAS = {
    "accelerometer": "accelerometer.schema.json",
    "gyroscope": "gyroscope.schema.json",
    "magnetometer": "magnetometer.schema.json",
    "device-motion": "device-motion.schema.json",
    "pedometer": "pedometer.schema.json",
    "pedometer/events": "pedometer-events.schema.json",
    "activity": "activity.schema.json",
    "altimeter": "altimeter.schema.json",
    "altimeter/absolute": "altimeter-absolute.schema.json",
    "submersion": "submersion.schema.json",
    "events": "events.schema.json",
    "temperature": "temperature.schema.json",
}
# END GENERATED streams


def topic_kind(topic: str) -> str | None:
    """The kind of a topic — its part after `{root}/`, e.g. "device-motion", "pedometer/events",
    "control/reply" — or None for a topic the agent does not use. Works for any `topics.root`."""
    for kind in TOPIC_KINDS:
        if topic == kind or topic.endswith("/" + kind):
            return kind
    return None


@dataclass(frozen=True)
class BinaryBatch:
    """A decoded binary batch: its header and its records as JSON-shaped sample dicts."""

    version: int
    kind: int
    stream: str
    first_seq: int
    samples: list[dict[str, Any]]

    @property
    def count(self) -> int:
        return len(self.samples)


def _where(topic: str | None) -> str:
    return f"{topic}: " if topic else ""


def _finite(v: float) -> float | None:
    # The JSON encoder writes a non-finite number as null; do the same so both encodings read alike.
    return v if math.isfinite(v) else None


def _vector(x: float, y: float, z: float) -> dict[str, float | None]:
    return {"x": _finite(x), "y": _finite(y), "z": _finite(z)}


def _clamp_unit(v: float) -> float:
    return max(-1.0, min(1.0, v))


def _attitude(x: float, y: float, z: float, w: float) -> dict[str, Any]:
    """The JSON `attitude` object from a quaternion: RotationMatrix(q) and Quaternion.eulerAngles of
    MotionModel, so the values match what the agent writes in JSON (to float32 precision)."""
    quaternion = {"x": _finite(x), "y": _finite(y), "z": _finite(z), "w": _finite(w)}
    keys = [f"m{r}{c}" for r in (1, 2, 3) for c in (1, 2, 3)]
    if not all(math.isfinite(v) for v in (x, y, z, w)):
        return {
            "quaternion": quaternion,
            "rotationMatrix": dict.fromkeys(keys),
            "roll": None,
            "pitch": None,
            "yaw": None,
        }
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if n > 0:
        w, x, y, z = w / n, x / n, y / n, z / n
    else:
        w, x, y, z = 1.0, 0.0, 0.0, 0.0
    m = [
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ]  # fmt: skip
    # Rounding can push an element a hair past ±1; a rotation matrix's elements are within [−1, 1].
    m = [_clamp_unit(v) for v in m]
    m11, m12, _, m21, m22, _, m31, m32, m33 = m
    sin_pitch = _clamp_unit(m32)
    if abs(sin_pitch) > 1 - 5e-13:
        # Gimbal lock: roll is reported as 0 and the rotation about the vertical goes to yaw.
        roll, pitch, yaw = 0.0, math.copysign(math.pi / 2, sin_pitch), math.atan2(m21, m11)
    else:
        roll, pitch, yaw = math.atan2(-m31, m33), math.asin(sin_pitch), math.atan2(-m12, m22)
    return {
        "quaternion": quaternion,
        "rotationMatrix": dict(zip(keys, m)),
        "roll": roll,
        "pitch": pitch,
        "yaw": yaw,
    }


def multiply_by_inverse_of(attitude: dict[str, float], reference: dict[str, float]) -> dict[str, float]:
    """Core Motion's `attitude.multiply(byInverseOf: reference)` on quaternions given as {"x", "y", "z", "w"}
    (as the payloads and the status write them): reference⁻¹ ⊗ attitude, Hamilton, both normalised first. The
    result rotates the current device axes into the device axes at the reference pose."""

    def unit(q: dict[str, float]) -> tuple[float, float, float, float]:
        n = math.sqrt(sum(q[k] ** 2 for k in "wxyz"))
        if not math.isfinite(n) or n == 0:
            raise ValueError(f"{q} is not a rotation: a quaternion needs a finite, non-zero norm")
        return q["w"] / n, q["x"] / n, q["y"] / n, q["z"] / n

    bw, bx, by, bz = unit(attitude)
    aw, ax, ay, az = unit(reference)
    ax, ay, az = -ax, -ay, -az  # the inverse of a unit quaternion is its conjugate
    return {
        "x": aw * bx + ax * bw + ay * bz - az * by,
        "y": aw * by - ax * bz + ay * bw + az * bx,
        "z": aw * bz + ax * by - ay * bx + az * bw,
        "w": aw * bw - ax * bx - ay * by - az * bz,
    }


def relative_attitude(sample: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """The `relativeAttitude` object the agent adds to JSON device-motion samples while a reference is set,
    computed from a sample's absolute attitude and the status's `referenceAttitude`
    (`{"quaternion": {"w", "x", "y", "z"}, "time": …}`): for version-1 binary batches, which do not carry it, and
    for references of one's own. Same fields as the JSON: quaternion, rotationMatrix, roll, pitch, yaw,
    referenceTime (None when `reference` has no time)."""
    q = multiply_by_inverse_of(sample["attitude"]["quaternion"], reference["quaternion"])
    out = _attitude(q["x"], q["y"], q["z"], q["w"])
    out["referenceTime"] = reference.get("time")
    return out


def _motion_sample(
    data: bytes, offset: int, version: int, seq: int, i: int, where: str
) -> dict[str, Any]:
    """One device-motion record (version 1 or 2) as its JSON sample's dict."""
    record = MOTION_RECORD if version == 1 else MOTION_RECORD_V2
    v = record.unpack_from(data, offset)
    timestamp, time = v[0], v[1]
    qx, qy, qz, qw = v[2:6]
    heading, accuracy, frame = v[18], v[19], v[20]
    corrupt = f"{where}corrupt device-motion record {i} (seq {seq})"
    if accuracy >= len(ACCURACIES):
        raise ValueError(f"{corrupt}: magnetic accuracy byte {accuracy} is not 0–3")
    if frame >= len(REFERENCE_FRAMES):
        raise ValueError(f"{corrupt}: reference frame byte {frame} is not 0–3")
    if version == 1 and v[21] != 0:
        raise ValueError(f"{corrupt}: reserved bytes are {v[21]:#06x}, must be 0")
    sample: dict[str, Any] = {
        "seq": seq,
        "timestamp": timestamp,
        "time": time,
        "attitude": _attitude(qx, qy, qz, qw),
        "rotationRate": _vector(*v[6:9]),
        "gravity": _vector(*v[9:12]),
        "userAcceleration": _vector(*v[12:15]),
        "magneticField": {"field": _vector(*v[15:18]), "accuracy": ACCURACIES[accuracy]},
        "heading": _finite(heading),
        "referenceFrame": REFERENCE_FRAMES[frame],
    }
    if version == 1:
        return sample
    flags, reserved, inclination, heading_accuracy = v[21], v[22], v[23], v[24]
    if flags & ~RELATIVE_ATTITUDE_PRESENT:
        raise ValueError(f"{corrupt}: flags byte {flags:#04x} sets bits other than bit 0 (relative attitude)")
    if reserved != 0:
        raise ValueError(f"{corrupt}: reserved byte 87 is {reserved}, must be 0")
    sample["inclinationAccuracy"] = _finite(inclination)
    sample["headingAccuracy"] = _finite(heading_accuracy)
    if flags & RELATIVE_ATTITUDE_PRESENT:
        rx, ry, rz, rw, reference_time = v[25:30]
        relative = _attitude(rx, ry, rz, rw)
        relative["referenceTime"] = _finite(reference_time)
        sample["relativeAttitude"] = relative
    elif any(data[offset + 96 : offset + 120]):
        raise ValueError(f"{corrupt}: relative attitude bytes 96–119 are not all 0 while its flag (bit 0) is clear")
    return sample


def parse_binary_batch(payload: bytes, topic: str | None = None) -> BinaryBatch:
    """Decodes a binary batch ("MAB": raw sensors version 1, device motion version 1 or 2). Raises ValueError
    naming what is wrong: a short or corrupt header, an unknown kind or a version this client does not read for
    it, a length that does not match the record count, an out-of-range enumeration byte, reserved bits set, or a
    kind that does not belong on `topic` (when given)."""
    where = _where(topic)
    data = bytes(payload)
    if len(data) < HEADER.size:
        raise ValueError(
            f"{where}truncated binary batch: {len(data)} bytes, shorter than the {HEADER.size}-byte MAB header"
        )
    magic, version, kind, reserved, count, first_seq = HEADER.unpack_from(data, 0)
    if magic != BINARY_MAGIC:
        raise ValueError(f"{where}not a binary batch: the magic is {magic!r}, expected {BINARY_MAGIC!r}")
    if kind not in KINDS:
        known = ", ".join(f"{k} {name}" for k, (name, _) in KINDS.items())
        raise ValueError(f"{where}unknown binary batch kind {kind} (known: {known})")
    stream, field = KINDS[kind]
    readable = BINARY_VERSIONS[kind]
    if version not in readable:
        versions = " and ".join(str(r) for r in readable)
        plural = "s" if len(readable) > 1 else ""
        newer = version > readable[-1]
        raise ValueError(
            f"{where}unsupported binary batch version {version}: this client reads version{plural} {versions} "
            f"of {stream} batches"
            + (" (a newer agent's layout: update motion_agent_client, or set the stream's encoding to json)" if newer else "")
        )
    if reserved != 0:
        raise ValueError(f"{where}corrupt binary batch header: reserved byte 5 is {reserved}, must be 0 in version {version}")
    if first_seq == 0:
        raise ValueError(f"{where}corrupt binary batch header: the first seq is 0, but seq counts from 1")
    if topic is not None:
        on = topic_kind(topic)
        if on is not None and on != stream:
            raise ValueError(
                f"{where}binary batch of kind {kind} ({stream}) on a {on} topic"
                + ("" if on in SAMPLE_STREAMS else f": only {', '.join(SAMPLE_STREAMS)} publish binary batches")
            )
    record = RAW_RECORD if field is not None else MOTION_RECORD if version == 1 else MOTION_RECORD_V2
    expected = HEADER.size + count * record.size
    if len(data) != expected:
        problem = "truncated" if len(data) < expected else "trailing bytes after the records"
        raise ValueError(
            f"{where}{problem}: the header announces {count} {stream} records of {record.size} bytes "
            f"({expected} bytes with the header), the payload has {len(data)} bytes"
        )
    out: list[dict[str, Any]] = []
    for i in range(count):
        seq = first_seq + i
        offset = HEADER.size + i * record.size
        if field is not None:
            timestamp, time, x, y, z = RAW_RECORD.unpack_from(data, offset)
            out.append({"seq": seq, "timestamp": timestamp, "time": time, field: _vector(x, y, z)})
        else:
            out.append(_motion_sample(data, offset, version, seq, i, where))
    return BinaryBatch(version=version, kind=kind, stream=stream, first_seq=first_seq, samples=out)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (the agent writes null for a value it could not give)")


def decode_json(payload: bytes, topic: str | None = None) -> dict[str, Any]:
    """Decodes a JSON payload, which must be a UTF-8 JSON object; raises ValueError saying why not."""
    where = _where(topic)
    try:
        text = bytes(payload).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}payload is not UTF-8: {e}") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        raise ValueError(f"{where}payload is not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where}payload is JSON but not an object: {type(value).__name__}")
    return value


def decode(topic: str | None, payload: bytes) -> dict[str, Any] | list[dict[str, Any]]:
    """Decodes one message of the agent.

    - A JSON payload (first byte `{`) → the dict, as published: one sample, a JSON batch `{"batch": [...]}`,
      a status, metrics, a command or a reply.
    - A binary batch (first bytes `MAB`) → the list of its samples, as dicts with the JSON samples' fields.

    Raises ValueError naming the topic and what is wrong (empty, not UTF-8 or JSON, truncated or corrupt batch).
    """
    where = _where(topic)
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise TypeError(f"{where}payload must be bytes, not {type(payload).__name__}")
    data = bytes(payload)
    if not data:
        raise ValueError(f"{where}empty payload (a retained message being cleared?)")
    if data[:1] == b"M":
        return parse_binary_batch(data, topic).samples
    if data.lstrip()[:1] == b"{":
        return decode_json(data, topic)
    raise ValueError(
        f"{where}neither a JSON object (first byte '{{') nor a binary batch (first bytes 'MAB'): "
        f"starts with {data[:8]!r}"
    )


def samples(topic: str | None, payload: bytes) -> list[dict[str, Any]]:
    """The samples of a sample-stream message whatever its form — one JSON sample, a JSON batch, a binary
    batch — as a list, oldest first. Any other JSON message comes back as a one-element list."""
    decoded = decode(topic, payload)
    if isinstance(decoded, list):
        return decoded
    if set(decoded) == {"batch"} and isinstance(decoded["batch"], list):
        return decoded["batch"]
    return [decoded]
