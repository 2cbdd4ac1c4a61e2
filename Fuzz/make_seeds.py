#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Fuzz/Corpus/<target>/): small valid inputs of every shape each
parser accepts, plus a few near misses. Run from the repository root; the output is committed, so this only needs
running again when a format changes."""
import base64, hashlib, json, os, struct, zlib

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


# Ed25519 (RFC 8032, section 6's reference code, pure Python so a clone alone can run this): the fuzz targets'
# trusted key is the private key 01 02 … 20 with the id "fuzz-key" (Fuzz/FuzzSignedControl, FuzzSignedEnvelope).
_p = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_d = -121665 * pow(121666, _p - 2, _p) % _p
_I = pow(2, (_p - 1) // 4, _p)


def _add(P, Q):
    A, B = (P[1] - P[0]) * (Q[1] - Q[0]) % _p, (P[1] + P[0]) * (Q[1] + Q[0]) % _p
    C, D = 2 * P[3] * Q[3] * _d % _p, 2 * P[2] * Q[2] % _p
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F % _p, G * H % _p, F * G % _p, E * H % _p)


def _mul(s, P):
    Q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            Q = _add(Q, P)
        P = _add(P, P)
        s >>= 1
    return Q


def _recover_x(y, sign):
    x2 = (y * y - 1) * pow(_d * y * y + 1, _p - 2, _p)
    x = pow(x2, (_p + 3) // 8, _p)
    if (x * x - x2) % _p != 0:
        x = x * _I % _p
    return _p - x if x & 1 != sign else x


_gy = 4 * pow(5, _p - 2, _p) % _p
_gx = _recover_x(_gy, 0)
_G = (_gx, _gy, 1, _gx * _gy % _p)


def _compress(P):
    zinv = pow(P[2], _p - 2, _p)
    x, y = P[0] * zinv % _p, P[1] * zinv % _p
    return int.to_bytes(y | ((x & 1) << 255), 32, "little")


def _expand(secret):
    h = hashlib.sha512(secret).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    return a, h[32:]


def ed25519_public(secret):
    return _compress(_mul(_expand(secret)[0], _G))


def ed25519_sign(secret, message):
    a, prefix = _expand(secret)
    A = _compress(_mul(a, _G))
    r = int.from_bytes(hashlib.sha512(prefix + message).digest(), "little") % _L
    R = _compress(_mul(r, _G))
    h = int.from_bytes(hashlib.sha512(R + A + message).digest(), "little") % _L
    return R + int.to_bytes((r + h * a) % _L, 32, "little")


FUZZ_KEY = bytes(range(1, 33))
FUZZ_KEY_ID = "fuzz-key"
b64 = lambda b: base64.b64encode(b).decode()


def compact(obj):
    """JSON as StrictJSON.Value.encoded() writes it: no spaces, members in order."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def envelope(signed, key=FUZZ_KEY, key_id=FUZZ_KEY_ID):
    return compact({"key": key_id, "signature": b64(ed25519_sign(key, signed)), "signed": b64(signed)})


# Signed commands: {"target", "counter", then the command}, as `motion-agent ctl --signing-key` signs them. The
# counters lie above the floor the targets' device starts with (their clock minus the 300 s window, in µs).
for i, c in enumerate(commands[:8]):
    signed = compact(dict({"target": "motion/dev1/control", "counter": 1763700000000001 + i}, **c))
    # Byte 0 = 1: the target seals the rest itself.
    put("FuzzSignedControl", f"to-sign-{i:02d}", b"\x01" + signed)
    # Byte 0 = 0: the rest is the payload as it arrives, sealed here.
    put("FuzzSignedControl", f"envelope-{i:02d}", b"\x00" + envelope(signed))
put("FuzzSignedControl", "moved-to-fleet", b"\x03" + compact({"target": "motion/dev1/control", "counter": 1763700000000100, "id": "m", "command": "ping"}))
put("FuzzSignedControl", "no-counter", b"\x01" + compact({"target": "motion/dev1/control", "id": "n", "command": "ping"}))
put("FuzzSignedControl", "unsigned", b"\x00" + json.dumps(commands[0]).encode())
put("FuzzSignedControl", "bad-signature", b"\x00" + compact({"key": FUZZ_KEY_ID, "signature": b64(bytes(64)), "signed": "e30="}))
put("FuzzSignedControl", "unknown-key", b"\x00" + envelope(b'{"target":"motion/dev1/control"}', key=bytes(32), key_id="other"))

# Signed desired documents for each place FuzzSignedEnvelope reads them (byte 0 bits 1-2: fleet, group lab, device
# dev1, device topic with the fleet layer); bit 0 set: the target seals the rest; bit 3: a device that does not sign.
places = [("fleet", "motion/fleet/desired"), ("group lab", "motion/group/lab/desired"), ("device", "motion/dev1/desired")]
documents = [
    {"version": 3, "streams": {"accelerometer": {"rate_hz": 100, "qos": 1}, "magnetometer": {"enabled": False}}},
    {"version": 4, "clear": True},
    {"version": 9, "metrics": {"interval_s": 30}, "streams": {"device-motion": {"batch": 10, "encoding": "binary"}}},
]
for n, (layer, topic) in enumerate(places):
    for i, d in enumerate(documents):
        signed = compact(dict({"target": topic, "layer": layer}, **d))
        put("FuzzSignedEnvelope", f"to-sign-{n}-{i}", bytes([1 | n << 1]) + signed)
        put("FuzzSignedEnvelope", f"envelope-{n}-{i}", bytes([n << 1]) + envelope(signed))
put("FuzzSignedEnvelope", "layer-mismatch", bytes([1 | 3 << 1]) + compact({"target": "motion/dev1/desired", "layer": "device", "version": 2}))
put("FuzzSignedEnvelope", "moved", bytes([1 | 2 << 1]) + compact({"target": "motion/group/lab/desired", "layer": "group lab", "version": 2}))
put("FuzzSignedEnvelope", "unsigned-device", bytes([8]) + json.dumps(documents[0]).encode())
put("FuzzSignedEnvelope", "unsigned-refused", bytes([0]) + json.dumps(documents[0]).encode())

# Trust files (byte 0 = 0) and operator key files (byte 0 = 1), as `motion-agent keys generate` writes them.
second = bytes(range(33, 65))
put("FuzzTrustedKeyFile", "trusted-keys",
    b"\x00# operators\n" + f"{FUZZ_KEY_ID} ed25519 {b64(ed25519_public(FUZZ_KEY))} alice, 2026\n\n"
    f"ops-2 ed25519 {b64(ed25519_public(second))}\n".encode())
put("FuzzTrustedKeyFile", "trusted-keys-crlf", b"\x00" + f"a ed25519 {b64(ed25519_public(second))}\r\n".encode())
put("FuzzTrustedKeyFile", "repeated-id", b"\x00" + f"a ed25519 {b64(bytes(32))}\na ed25519 {b64(bytes(32))}\n".encode())
put("FuzzTrustedKeyFile", "short-key", b"\x00a ed25519 AAAA\n")
put("FuzzTrustedKeyFile", "operator-key",
    b"\x01# motion-agent operator signing key \xe2\x80\x94 keep it secret\n"
    + f"motion-agent-ed25519-private-key {FUZZ_KEY_ID} {b64(FUZZ_KEY)}\n".encode())

# StrictJSON: byte 0 picks the limits (0 command, 1 desired document, 2 a tool's document, 3 tight ones).
json_seeds = {
    "command": (0, json.dumps(commands[1])),
    "envelope": (0, envelope(compact(dict({"target": "motion/dev1/control", "counter": 1}, **commands[0]))).decode()),
    "document": (1, json.dumps(documents[0])),
    "escapes": (2, r'{"a":"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r","b":[1,-0.5,2e10,-3E-7,0,true,false,null],"c":{}}'),
    "nested": (2, '{"a":[[[[{"b":[{}]}]]]],"c":[]}'),
    "tight": (3, '{"a":[1,2],"b":"0123456789abcdef"}'),
    "duplicate-key": (1, '{"a":1,"a":2}'),
    "too-deep": (0, "[" * 8 + "]" * 8),
    "lone-surrogate": (2, r'["\ud800"]'),
    "leading-zero": (2, "[01]"),
    "trailing": (2, '{"a":1} x'),
}
for name, (limits, text) in json_seeds.items():
    put("FuzzStrictJSON", name, bytes([limits]) + text.encode())

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
# YAML is never read from the network: a near miss now.
put("FuzzDesiredDocument", "yaml.yaml", "version: 4\nstreams:\n  accelerometer:\n    rate_hz: 25\n")
put("FuzzDesiredDocument", "clear.json", '{"version": 15, "clear": true}')
put("FuzzDesiredDocument", "clear-with-settings.json", '{"version": 16, "clear": true, "metrics": {"interval_s": 5}}')
put("FuzzDesiredDocument", "duplicate-key.json", '{"version": 17, "version": 18}')
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

# The console's HTTP requests (byte 0 even) and WebSocket frames (odd); byte 1 is where the bytes are split into two
# reads.
put("FuzzConsoleHTTP", "get-page", b"\x00\x14" + b"GET /?token=abc HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nCookie: motion_console=x\r\n\r\n")
put("FuzzConsoleHTTP", "post-edit", b"\x00\x3c" + b'POST /api/desired HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: http://127.0.0.1:8080\r\nContent-Type: application/json\r\nContent-Length: 47\r\n\r\n{"layer":"fleet","set":{"metrics.interval_s":"5"}}')
put("FuzzConsoleHTTP", "websocket-upgrade", b"\x00\x05" + b"GET /ws HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://localhost:8080\r\n\r\n")
put("FuzzConsoleHTTP", "chunked", b"\x00\x0a" + b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")

def ws_masked(opcode, payload, fin=True):
    mask = b"\x01\x02\x03\x04"
    head = bytes([(0x80 if fin else 0) | opcode])
    head += bytes([0x80 | len(payload)]) if len(payload) < 126 else bytes([0x80 | 126]) + struct.pack(">H", len(payload))
    return head + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(payload))

put("FuzzConsoleHTTP", "ws-watch", b"\x01\x03" + ws_masked(1, b'{"watch":"imu-1"}'))
put("FuzzConsoleHTTP", "ws-fragments-and-ping", b"\x01\x09" + ws_masked(1, b'{"wat', False) + ws_masked(9, b"\x07") + ws_masked(0, b'ch":null}'))
put("FuzzConsoleHTTP", "ws-close", b"\x01\x02" + ws_masked(8, b"\x03\xe8"))
