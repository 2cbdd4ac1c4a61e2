"""Shared helpers for the client's tests: building binary batches byte by byte, as MotionWire's BinaryBatchWriter.swift does."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[1]
REPOSITORY = CLIENT.parents[1]
SCHEMAS = REPOSITORY / "docs" / "schemas"
if str(CLIENT) not in sys.path:
    sys.path.insert(0, str(CLIENT))


def header(kind: int, count: int, first_seq: int, version: int = 1, reserved: int = 0, magic: bytes = b"MAB") -> bytes:
    """The 16-byte header, written field by field (not with the decoder's own struct)."""
    return (
        magic
        + bytes([version, kind, reserved])
        + count.to_bytes(2, "little")
        + first_seq.to_bytes(8, "little")
    )


def raw_record(timestamp: float, time: float, x: float, y: float, z: float) -> bytes:
    return struct.pack("<d", timestamp) + struct.pack("<d", time) + b"".join(struct.pack("<f", v) for v in (x, y, z))


def motion_record(
    timestamp: float,
    time: float,
    quaternion: tuple[float, float, float, float],
    rotation_rate: tuple[float, float, float],
    gravity: tuple[float, float, float],
    user_acceleration: tuple[float, float, float],
    field: tuple[float, float, float],
    heading: float,
    accuracy: int,
    frame: int,
    reserved: bytes = b"\x00\x00",
) -> bytes:
    floats = [*quaternion, *rotation_rate, *gravity, *user_acceleration, *field, heading]
    return (
        struct.pack("<d", timestamp)
        + struct.pack("<d", time)
        + b"".join(struct.pack("<f", v) for v in floats)
        + bytes([accuracy, frame])
        + reserved
    )


def motion_record_v2(
    timestamp: float,
    time: float,
    quaternion: tuple[float, float, float, float],
    heading: float,
    accuracy: int,
    frame: int,
    inclination_accuracy: float,
    heading_accuracy: float,
    relative: tuple[float, float, float, float] | None = None,
    reference_time: float = 0.0,
    flags: int | None = None,
    reserved: int = 0,
) -> bytes:
    """A version-2 device-motion record (120 bytes), written field by field: version 1's 84 bytes up to the heading
    (rotation rate, gravity, user acceleration, field fixed: 0, (0, 0, −1), 0, (20, 0, −40)), the accuracy and
    frame bytes, flags (bit 0: relative attitude), a reserved byte, the two accuracies and the relative attitude
    (zeros when `relative` is None)."""
    start = motion_record(timestamp, time, quaternion, (0, 0, 0), (0, 0, -1), (0, 0, 0), (20, 0, -40), heading, accuracy, frame)[:86]
    if flags is None:
        flags = 0 if relative is None else 1
    tail = bytes([flags, reserved]) + struct.pack("<f", inclination_accuracy) + struct.pack("<f", heading_accuracy)
    if relative is None:
        tail += bytes(24)
    else:
        tail += b"".join(struct.pack("<f", v) for v in relative) + struct.pack("<d", reference_time)
    return start + tail
