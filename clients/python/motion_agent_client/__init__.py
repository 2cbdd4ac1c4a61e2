"""A small reference client for MotionAgent's MQTT payloads (docs/payloads.md, docs/schemas/).

    from motion_agent_client import decode, samples
    decode("motion/imu-17/accelerometer", payload)   # dict for JSON, list of sample dicts for a binary batch
    samples("motion/imu-17/accelerometer", payload)  # always a list of samples (single, JSON or binary batch)
    relative_attitude(sample, status["streams"]["device-motion"]["referenceAttitude"])  # reference⁻¹ ⊗ attitude
"""

from .decoder import (
    BINARY_MAGIC,
    BINARY_VERSION,
    BINARY_VERSIONS,
    SAMPLE_STREAMS,
    STREAM_SCHEMAS,
    STREAMS,
    TOPIC_KINDS,
    BinaryBatch,
    decode,
    decode_json,
    multiply_by_inverse_of,
    parse_binary_batch,
    relative_attitude,
    samples,
    topic_kind,
)

__all__ = [
    "BINARY_MAGIC",
    "BINARY_VERSION",
    "BINARY_VERSIONS",
    "SAMPLE_STREAMS",
    "STREAMS",
    "STREAM_SCHEMAS",
    "TOPIC_KINDS",
    "BinaryBatch",
    "decode",
    "decode_json",
    "multiply_by_inverse_of",
    "parse_binary_batch",
    "relative_attitude",
    "samples",
    "topic_kind",
]

__version__ = "0.1.0"
