#!/usr/bin/env python3
"""Writes the seeds of FuzzSparkplugCommand (Fuzz/Corpus/FuzzSparkplugCommand/): NCMD, DCMD and STATE messages an
edge node receives, each as one byte choosing the topic (see the target) followed by the payload — Sparkplug B
protobuf hand-encoded here (field numbers from Sources/SparkplugB/Schema/sparkplug_b.proto), so the seeds do not
depend on the code under test. Run from the repository root; the output is committed."""
import json, os, struct

ROOT = "Fuzz/Corpus/FuzzSparkplugCommand"
NCMD, DCMD_ACCELEROMETER, DCMD_ACTIVITY, DCMD_NOT_CARRIED, STATE, OTHER_NODE = range(6)
INT64, UINT64, FLOAT, DOUBLE, BOOLEAN, STRING = 4, 8, 9, 10, 11, 12


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number, wire, data):
    key = varint(number << 3 | wire)
    if wire == 0:
        return key + varint(data)
    if wire == 1 or wire == 5:
        return key + data
    return key + varint(len(data)) + data


def metric(name=None, alias=None, datatype=None, value=None):
    out = b""
    if name is not None:
        out += field(1, 2, name.encode())
    if alias is not None:
        out += field(2, 0, alias)
    out += field(3, 0, 1_795_000_000_000)
    if datatype is not None:
        out += field(4, 0, datatype)
    if datatype == BOOLEAN:
        out += field(14, 0, int(value))
    elif datatype == DOUBLE:
        out += field(13, 1, struct.pack("<d", value))
    elif datatype == FLOAT:
        out += field(12, 5, struct.pack("<f", value))
    elif datatype in (INT64, UINT64):
        out += field(11, 0, value & (2**64 - 1))
    elif datatype == STRING:
        out += field(15, 2, value.encode())
    return out


def payload(*metrics):
    return field(1, 0, 1_795_000_000_000) + b"".join(field(2, 2, m) for m in metrics)


def put(name, topic, data):
    os.makedirs(ROOT, exist_ok=True)
    with open(f"{ROOT}/{name}", "wb") as f:
        f.write(bytes([topic]) + (data.encode() if isinstance(data, str) else data))


put("ncmd-rebirth", NCMD, payload(metric("Node Control/Rebirth", None, BOOLEAN, True)))
put("ncmd-rebirth-by-alias", NCMD, payload(metric(None, 2, BOOLEAN, True)))
put("ncmd-next-server", NCMD, payload(metric("Node Control/Next Server", None, BOOLEAN, True)))
put("ncmd-read-only", NCMD, payload(metric("bdSeq", None, INT64, 9)))
put("dcmd-rate", DCMD_ACCELEROMETER, payload(metric("config/rateHz", None, DOUBLE, 25.0)))
put("dcmd-rate-float", DCMD_ACCELEROMETER, payload(metric("config/rateHz", None, FLOAT, 12.5)))
put("dcmd-enabled", DCMD_ACTIVITY, payload(metric("config/enabled", None, BOOLEAN, False)))
put("dcmd-two", DCMD_ACTIVITY, payload(metric("config/enabled", None, BOOLEAN, True), metric("config/rateHz", None, DOUBLE, 2.0)))
put("dcmd-wrong-type", DCMD_ACCELEROMETER, payload(metric("config/rateHz", None, STRING, "fast")))
put("dcmd-read-only", DCMD_ACCELEROMETER, payload(metric("acceleration/x", None, FLOAT, 1.0)))
put("dcmd-unknown-alias", DCMD_ACCELEROMETER, payload(metric(None, 99999, DOUBLE, 1.0)))
put("dcmd-not-carried", DCMD_NOT_CARRIED, payload(metric("config/rateHz", None, DOUBLE, 25.0)))
put("dcmd-empty", DCMD_ACCELEROMETER, b"")
put("dcmd-truncated", DCMD_ACCELEROMETER, payload(metric("config/rateHz", None, DOUBLE, 25.0))[:-3])
put("state-online", STATE, json.dumps({"online": True, "timestamp": 1_795_000_000_500}))
put("state-offline", STATE, json.dumps({"online": False, "timestamp": 1_795_000_000_600}))
put("state-stale", STATE, json.dumps({"online": False, "timestamp": 1}))
put("state-string-bool", STATE, '{"online": "true", "timestamp": 1795000000700}')
put("other-node", OTHER_NODE, payload(metric("Node Control/Rebirth", None, BOOLEAN, True)))
