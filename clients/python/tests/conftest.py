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
