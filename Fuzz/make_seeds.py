#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Fuzz/Corpus/<target>/): small valid inputs of every shape each
parser accepts, plus a few near misses. Run from the repository root; the output is committed, so this only needs
running again when a format changes."""
import base64, hashlib, hmac, json, os, struct, zlib

ROOT = "Fuzz/Corpus"


def put(target, name, data):
    os.makedirs(f"{ROOT}/{target}", exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(f"{ROOT}/{target}/{name}", "wb") as f:
        f.write(data)


commands = [
    {"id": "1", "command": "stop", "stream": "magnetometer"},
    {"id": "2", "command": "set-rate", "stream": "gyroscope", "rate_hz": 500},
    {"id": "3", "command": "set-rate", "stream": "magnetometer", "interval_s": 0.2},
    {"id": "4", "command": "set-qos", "stream": "pedometer", "qos": 1},
    {"id": "5", "command": "set-retain", "stream": "device-motion", "retain": True},
    {"id": "6", "command": "set-reference-frame", "frame": "xMagneticNorthZVertical"},
    {"id": "7", "command": "reset-pedometer"},
    {"id": "8", "command": "status"},
    {"id": "9", "command": "list-streams"},
    {"id": "10", "command": "ping"},
    {"id": "11", "command": "set-batch", "stream": "accelerometer", "batch": 40, "encoding": "binary"},
    {"id": "12", "command": "set-batch", "stream": "device-motion", "batch": 10},
    {"id": "13", "command": "query-pedometer", "from": "2026-11-21T06:00:00Z", "to": "2026-11-21T07:00:00Z"},
    {"id": "14", "command": "query-activity", "from": 1795240800, "to": 1795244400},
    {"id": "15", "command": "reload-config"},
    {"id": "16", "command": "start", "stream": "accelerometer", "timestamp": 1763700000.5},
]
for i, c in enumerate(commands):
    put("FuzzControl", f"command-{i:02d}.json", json.dumps(c))
put("FuzzControl", "not-an-object.json", "[1, 2, 3]")
put("FuzzControl", "no-id.json", '{"command": "ping"}')
put("FuzzControl", "unicode.json", '{"id": "\\u00e9\\ud83d\\ude00", "command": "set-rate", "stream": "gyroscope", "rate_hz": 1e308}')

KEY = b"fuzzing-key-0123456789abcdef"  # the key FuzzSignedControl signs and checks with
for i, c in enumerate(commands[:8]):
    signed = dict(c, timestamp=1763700000 + i, nonce=f"{i:016x}")
    body = json.dumps(signed).encode()
    # Byte 0 = 1: the target signs the rest itself.
    put("FuzzSignedControl", f"to-sign-{i:02d}", b"\x01" + body)
    envelope = {"signed": base64.b64encode(body).decode(),
                "signature": hmac.new(KEY, body, hashlib.sha256).hexdigest()}
    # Byte 0 = 0: the rest is the payload as it arrives.
    put("FuzzSignedControl", f"envelope-{i:02d}", b"\x00" + json.dumps(envelope, sort_keys=True).encode())
put("FuzzSignedControl", "unsigned", b"\x00" + json.dumps(commands[0]).encode())
put("FuzzSignedControl", "bad-signature", b"\x00" + b'{"signed": "e30=", "signature": "' + b"0" * 64 + b'"}')

with open("config.yaml", "rb") as f:
    put("FuzzConfigYAML", "config.yaml", f.read())
put("FuzzConfigYAML", "minimal.yaml", "mqtt:\n  host: 127.0.0.1\n  port: 1883\n")
put("FuzzConfigYAML", "streams.yaml",
    "agent:\n  device_id: dev1\n  state_dir: /tmp/x\nstreams:\n  accelerometer:\n    rate_hz: 200\n    qos: 1\n"
    "    durable: true\n  gyroscope:\n    enabled: false\noutbox:\n  max_bytes: 1048576\n")
put("FuzzConfigYAML", "flow.yaml", '{"mqtt": {"host": "b", "port": 8883, "tls": {"enabled": true}}, "metrics": {"interval_s": 0}}')
put("FuzzConfigYAML", "anchors.yaml", "defaults: &d\n  rate_hz: 50\nstreams:\n  gyroscope: *d\n  magnetometer:\n    <<: *d\n")

docs = [
    {"version": 13, "streams": {"accelerometer": {"rate_hz": 100, "qos": 1}, "magnetometer": {"enabled": False}},
     "metrics": {"interval_s": 30}},
    {"version": 14},
    {"version": 1, "streams": {"device-motion": {"batch": 10, "encoding": "binary", "retain": True}}},
    {"version": 2, "streams": {"gyroscope": {"rate_hz": 5000}}},
    {"version": 3, "mqtt": {"host": "elsewhere"}},
    {"version": 9007199254740992, "streams": {"pedometer": {"qos": 2, "durable": True}}},
]
for i, d in enumerate(docs):
    put("FuzzDesiredDocument", f"document-{i:02d}.json", json.dumps(d))
put("FuzzDesiredDocument", "yaml.yaml", "version: 4\nstreams:\n  accelerometer:\n    rate_hz: 25\n")
put("FuzzDesiredDocument", "no-version.json", '{"streams": {}}')

header = "timestamp,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z,mag_x,mag_y,mag_z,pressure,temperature\n"
rows = "".join(f"{0.01 * i:.3f},0.01,-0.02,-9.81,0.001,0.002,-0.001,21.5,-4.2,40.1,101.325,24.5\n" for i in range(5))
put("FuzzRecordingCSV", "full.csv", header + rows)
put("FuzzRecordingCSV", "sparse.csv", header + "0.000,0.1,0.2,-9.8,,,,,,,,\n0.005,,,,0.1,0.2,0.3,,,,,\n0.010,,,,,,,1,2,3,101.3,\n")
put("FuzzRecordingCSV", "backwards.csv", header + "1.0,0,0,-9.8,,,,,,,,\n0.5,0,0,-9.8,,,,,,,,\n")
put("FuzzRecordingCSV", "crlf.csv", (header + rows).replace("\n", "\r\n"))

def batch(kind, count, first=1):
    out = b"MAB" + struct.pack("<BBBHQ", 1, kind, 0, count, first)
    for i in range(count):
        t = 100.0 + i * 0.005
        if kind == 4:
            out += struct.pack("<dd", t, 1763700000 + t) + struct.pack("<16f", *([0.0, 0.0, 0.0, 1.0] + [0.1] * 12))
            out += struct.pack("<fBBH", 90.0, 3, 1, 0)
        else:
            out += struct.pack("<dd3f", t, 1763700000 + t, 0.01, -0.02, -1.0)
    return out

def motion_v2(count, relative_every=0, first=1):
    """Device motion, layout version 2: 120-byte records; every `relative_every`-th carries a relative attitude."""
    out = b"MAB" + struct.pack("<BBBHQ", 2, 4, 0, count, first)
    for i in range(count):
        t = 100.0 + i * 0.005
        relative = relative_every and i % relative_every == 0
        out += struct.pack("<dd", t, 1763700000 + t) + struct.pack("<16f", *([0.0, 0.0, 0.0, 1.0] + [0.1] * 12))
        out += struct.pack("<fBBBB", 90.0, 3, 2, 1 if relative else 0, 0) + struct.pack("<ff", 0.41, 1.87 if i else -1.0)
        out += struct.pack("<4fd", 0.0, 0.6, 0.0, 0.8, 1795241100.25) if relative else bytes(24)
    return out

for kind in (1, 2, 3, 4):
    put("FuzzBinaryBatch", f"batch-kind{kind}", batch(kind, 3))
put("FuzzBinaryBatch", "batch-kind4-v2", motion_v2(3))
put("FuzzBinaryBatch", "batch-kind4-v2-relative", motion_v2(4, relative_every=2))
put("FuzzBinaryBatch", "empty-batch", batch(1, 0))
# The last byte picks the payload kind (PayloadKind.allCases, modulo 10); trailing whitespace keeps the JSON valid:
# "\n" (10) picks the accelerometer, " " (32) the magnetometer.
vector = {"seq": 1, "timestamp": 1.5, "time": 1763700000.1, "x": 0.0, "y": 0.0, "z": -1.0}
put("FuzzBinaryBatch", "json-accelerometer", json.dumps(vector).encode() + b"\n")
put("FuzzBinaryBatch", "json-magnetometer", json.dumps(dict(vector, accuracy="high")).encode() + b" ")

# IIO: 3 bytes per channel (flags: bit 0 big endian, bit 1 signed, bits 2-4 storage index, bits 5-6 repeat;
# bits; shift), then records.
def spec(channels):
    return b"".join(bytes(c) for c in channels)
le_s16 = (0b010 | (1 << 2), 16, 0)      # le:s16/16>>0
le_s12 = (0b010 | (1 << 2), 12, 4)      # le:s12/16>>4
be_u24 = (0b001 | (4 << 2), 24, 0)      # be:u24/24 (storage 24: refused)
le_s64 = (0b010 | (3 << 2), 64, 0)      # le:s64/64>>0
le_u32 = (0b000 | (2 << 2), 32, 0)
rec16 = struct.pack("<3hhhih", 100, -200, 16384, 5, -7, 101325, 245) + b"\x00\x00" + struct.pack("<q", 1_000_000_000)
put("FuzzIIOScan", "bmi160-like", spec([le_s16] * 5 + [le_u32, le_s16, le_s64]) + rec16 * 4)
put("FuzzIIOScan", "shifted", spec([le_s12] * 3 + [le_s16, le_s16, le_u32, le_s16, le_s64]) + bytes(range(64)) * 2)
put("FuzzIIOScan", "repeat", spec([(0b010 | (1 << 2) | (3 << 5), 16, 0)] * 3 + [le_s16, le_s16, be_u24, le_s16, le_s64]) + bytes(200))
put("FuzzIIOScan", "rates-text", spec([le_s16] * 8) + b"12.500000 25.000000 50.000000 100.000000 1600.000000\n")
put("FuzzIIOScan", "matrix-text", spec([le_s16] * 8) + b"0, -1, 0; -1, 0, 0; 0, 0, -1")

def record(seq, topic, payload, qos=1, retain=0, t=1763700000000):
    body = struct.pack("<QQBBH", seq, t, qos, retain, len(topic)) + topic + payload
    return struct.pack("<II", len(body), zlib.crc32(body)) + body

segment = b"".join(record(s, b"motion/dev1/accelerometer", b'{"seq":%d,"x":0.1}' % s) for s in range(1, 6))
put("FuzzDurableLog", "segment", b"\x00" + segment)
put("FuzzDurableLog", "segment-cursor", b"\x02" + struct.pack("<Q", 3) + segment)
put("FuzzDurableLog", "torn-tail", b"\x00" + segment[:-7])
put("FuzzDurableLog", "corrupt-middle", b"\x00" + segment[:60] + b"\xff" + segment[61:])
put("FuzzDurableLog", "reseal", b"\x01" + record(1, b"t", b"x")[:8] + b"\x00" * 30)
put("FuzzDurableLog", "empty", b"\x00")
