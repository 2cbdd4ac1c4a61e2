"""docs/schemas against themselves and against the documentation's examples: every file is a valid draft 2020-12
schema with its $id, the README maps every one, the documented examples validate, and near misses do not."""

from __future__ import annotations

import base64
import copy
import json

import pytest
from check_capture import BASE_ID, SCHEMA_FILES, Schemas
from conftest import SCHEMAS, header, motion_record, raw_record
from jsonschema import Draft202012Validator

from motion_agent_client import decode
from motion_agent_client.decoder import STREAM_SCHEMAS, STREAMS

schemas = Schemas(SCHEMAS)


def test_every_file_is_a_draft_2020_12_schema_with_its_id():
    files = sorted(SCHEMAS.glob("*.schema.json"))
    # One per stream topic (the generated list) and the agent's own documents.
    others = {"common", "configuration", "control-reply", "control-request", "metrics", "status"}
    assert {p.name for p in files} == set(STREAM_SCHEMAS.values()) | {f"{o}.schema.json" for o in others}
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema", path.name
        assert doc["$id"] == BASE_ID + path.name, path.name


def test_the_readme_maps_every_topic_kind_and_file():
    readme = (SCHEMAS / "README.md").read_text(encoding="utf-8")
    for kind, file in SCHEMA_FILES.items():
        assert f"`{{root}}/{kind}`" in readme, kind
        assert f"[{file}]({file})" in readme, file
    assert "[common.schema.json](common.schema.json)" in readme


def valid(kind, payload):
    errors = schemas.errors(kind, payload)
    assert not errors, errors


def invalid(kind, payload, fragment):
    errors = schemas.errors(kind, payload)
    assert errors, f"{kind} accepted {payload}"
    assert any(fragment in e for e in errors), errors


ACCEL = {"seq": 812, "timestamp": 5123.456789, "time": 1763700000.123456, "acceleration": {"x": 0.012345, "y": -0.003211, "z": -0.998871}}
MOTION = {
    "seq": 1, "timestamp": 3149.351647, "time": 1795241134.056757,
    "attitude": {
        "quaternion": {"x": 0.2834262, "y": 0.0711867, "z": 0.0211022, "w": 0.9561155},
        "rotationMatrix": {"m11": 0.9889743, "m12": 0, "m13": 0.1480872, "m21": 0.0807047, "m22": 0.8384486,
                           "m23": -0.538972, "m31": -0.1241636, "m32": 0.5449808, "m33": 0.8292041},
        "roll": 0.148634, "pitch": 0.576366, "yaw": 0,
    },
    "rotationRate": {"x": 0.32, "y": 0.04, "z": 0.05}, "gravity": {"x": 0.124164, "y": -0.544981, "z": -0.829204},
    "userAcceleration": {"x": 0.01, "y": 0.02, "z": -0.03},
    "magneticField": {"field": {"x": 16.0, "y": 8.1, "z": -46.6}, "accuracy": "high"},
    "heading": 123.456, "inclinationAccuracy": 0.412, "headingAccuracy": 1.873, "referenceFrame": "xMagneticNorthZVertical",
}  # fmt: skip
BIRTH = {
    "agentVersion": "0.1.0", "bootCount": 42, "clockSynchronized": True, "device": "imu-17",
    "devices": [{"activeSensors": ["accelerometer", "gyroscope"], "id": "simulated", "name": "simulated-imu",
                 "rateHz": 50, "sensors": ["accelerometer", "barometer", "gyroscope", "magnetometer"],
                 "supportedRatesHz": "1.5625 3.125 6.25 12.5 25 50 100 200"}],
    "outbox": {"bytes": 0, "depth": 0, "droppedOverflow": 0, "enqueued": 10, "failed": 0, "published": 10, "rejected": 0},
    "configuration": {
        "groups": ["lab"], "desired": {"fleet": 12, "group lab": 3},
        "refused": {"layer": "device", "version": 8, "time": 1795241134.1,
                    "reason": "streams.gyroscope.rate_hz: 5000 is out of range"},
        "overrides": {"streams.gyroscope.rate_hz": {"value": "40", "source": "command 7f1c2a at 2026-11-25T17:02:11Z"}},
        "notes": {"streams.accelerometer.rate_hz": "clamped by hardware to 200 Hz"},
    },
    "schemaVersion": 1,
    "sensors": {
        **{k: True for k in ["isAccelerometerAvailable", "isGyroAvailable", "isMagnetometerAvailable",
                             "isBarometerAvailable", "isDeviceMotionAvailable", "isStepCountingAvailable",
                             "isDistanceAvailable", "isFloorCountingAvailable", "isPaceAvailable", "isCadenceAvailable",
                             "isPedometerEventTrackingAvailable", "isActivityAvailable", "isRelativeAltitudeAvailable",
                             "isAbsoluteAltitudeAvailable", "isSubmersionAvailable"]},
        "availableAttitudeReferenceFrames": ["xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical"],
        "isLocationConfigured": False,
    },
    "source": "simulated (scenario walking, seed 1, up to 200 Hz)", "state": "online",
    "streams": {
        name: {"available": True, "batch": 1, "enabled": name != "submersion", "encoding": "json", "qos": 0,
               "rateHz": 50, "requestedRateHz": 50, "retain": False,
               **({"referenceFrame": "xArbitraryZVertical"} if name == "device-motion" else {})}
        for name in STREAMS
    },
    "time": 1763700000.1,
}  # fmt: skip
WILL = {"state": "offline", "reason": "connection lost", "bootCount": 42, "device": "imu-17", "agentVersion": "0.1.0",
        "schemaVersion": 1, "time": 1763700000.1, "clockSynchronized": False}  # fmt: skip
METRICS = json.loads(
    '{"agentVersion":"0.1.0","bootCount":2,"device":"imu-17","intervalSeconds":60,"time":1795242967.74,"uptimeSeconds":3600.02,'
    '"samples":{"read":720401,"invalid":0},'
    '"messages":{"enqueued":1294410,"published":1294410,"failed":0,"rejected":0,"droppedOverflow":0},'
    '"outbox":{"depth":0,"bytes":0},'
    '"connection":{"connected":true,"reconnects":1,"failures":3,"inboundDropped":0,"inboundOverBudget":0,"inboundOversize":0},'
    '"process":{"cpuPercent":2.99,"cpuSeconds":107.6,"rssBytes":27262976},'
    '"devices":{"iio:device0":{"samples":3600210,"nonFinite":0,"saturated":12,"timestampsBackwards":0,"readErrors":1,"recoveries":1}}}'
)


CONFIGURATION = {
    "device": "imu-17", "bootCount": 42, "time": 1763700000.1, "groups": ["lab"], "desired": {"fleet": 12, "group lab": 3},
    "settings": {"streams.accelerometer.rate_hz": {"value": "500", "source": "fleet v12", "note": "clamped by hardware to 200 Hz"},
                 "streams.gyroscope.rate_hz": {"value": "40", "source": "command 7f1c2a at 2026-11-25T17:02:11Z"},
                 "streams.gyroscope.qos": {"value": "0", "source": "config.yaml"}},
}  # fmt: skip


def test_the_status_carries_a_summary_and_the_configuration_topic_every_setting():
    valid("configuration", CONFIGURATION)
    # Every setting's source is on {root}/configuration, not in the status.
    invalid("status", {**BIRTH, "configuration": {**BIRTH["configuration"], "settings": CONFIGURATION["settings"]}},
            "Additional properties are not allowed")
    invalid("status", {**BIRTH, "configuration": {**BIRTH["configuration"], "overrides": {
        "streams.gyroscope.rate_hz": {"value": "40", "source": "fleet v12"}}}}, "does not match '^command '")
    invalid("configuration", {k: v for k, v in CONFIGURATION.items() if k != "settings"}, "'settings' is a required property")


def test_the_documented_stream_examples_validate():
    valid("accelerometer", ACCEL)
    valid("gyroscope", {"seq": 812, "timestamp": 5123.456789, "time": 1763700000.123456, "rotationRate": {"x": 0.000812, "y": -0.001204, "z": 0.5}})
    valid("magnetometer", {"seq": 406, "timestamp": 5123.456789, "time": 1763700000.123456, "magneticField": {"x": 21.412, "y": -1.634, "z": -44.021}})
    valid("device-motion", MOTION)
    valid("pedometer", {"seq": 12, "timestamp": 3200.1, "time": 1795241185.2, "startDate": 1795241134.057, "endDate": 1795241185.2,
                        "numberOfSteps": 91, "distance": 63.8, "floorsAscended": 0, "floorsDescended": 0,
                        "currentPace": 0.78, "currentCadence": 1.8, "averageActivePace": 0.8})
    valid("pedometer", {"seq": 1, "timestamp": 1, "time": 2, "startDate": 1, "endDate": 2, "numberOfSteps": 0, "distance": None,
                        "floorsAscended": None, "floorsDescended": None, "currentPace": None, "currentCadence": None,
                        "averageActivePace": None, "clockSynchronized": False})
    valid("pedometer/events", {"seq": 2, "timestamp": 1.5, "time": 1795241190.5, "type": "pause", "date": 1795241190.4})
    valid("events", {"seq": 3, "timestamp": 3, "time": 1795241102.3, "kind": "fall", "date": 1795241100.25, "resolution": None,
                     "peakAcceleration": 4.2, "orientationChange": 1.38, "detectionDate": 1795241102.3, "resolutionDate": None})
    valid("events", {"seq": 4, "timestamp": 9, "time": 1795241160.3, "kind": "fall", "date": 1795241100.25, "resolution": "unresponsive",
                     "peakAcceleration": 4.2, "orientationChange": 1.38, "detectionDate": 1795241102.3, "resolutionDate": 1795241160.3})
    valid("events", {"seq": 1, "timestamp": 2.3, "time": 1795241100.3, "kind": "impact", "date": 1795241100.25, "peakAcceleration": 5.0, "duration": 0.03})
    valid("events", {"seq": 2, "timestamp": 2.3, "time": 1795241100.3, "kind": "freeFall", "date": 1795241099.95, "duration": 0.3, "height": 0.441})
    valid("events", {"seq": 5, "timestamp": 9, "time": 1795241109, "kind": "tilt", "date": 1795241109, "isTilted": True, "angle": 0.61})
    invalid("events", {"seq": 1, "timestamp": 2.3, "time": 1795241100.3, "kind": "impact", "date": 1795241100.25, "peakAcceleration": 5.0}, "duration")
    invalid("events", {"seq": 1, "timestamp": 2.3, "time": 1795241100.3, "kind": "slip", "date": 1795241100.25}, "")
    valid("activity", {"seq": 3, "timestamp": 3210.0, "time": 1795241195.0, "startDate": 1795241190.0, "stationary": False,
                       "walking": True, "running": False, "cycling": False, "automotive": False, "unknown": False, "confidence": "high"})
    valid("altimeter", {"seq": 1, "timestamp": 1, "time": 2, "relativeAltitude": 0.42, "pressure": 98.92873})
    valid("altimeter/absolute", {"seq": 1, "timestamp": 1, "time": 2, "altitude": 201.41, "accuracy": 82.86, "precision": 0.05})
    valid("submersion", {"seq": 5, "timestamp": 1, "time": 2, "state": "submergedShallow", "depth": 0.62, "pressure": 107.4,
                         "surfacePressure": 101.3, "temperature": 18.5})
    valid("temperature", {"seq": 12, "timestamp": 30.5, "time": 1795241020.5, "temperature": 31.62})
    invalid("temperature", {"seq": 12, "timestamp": 30.5, "time": 1795241020.5}, "temperature")
    valid("status", BIRTH)
    valid("status", WILL)
    valid("status", {**BIRTH, "state": "offline", "reason": "shutdown"})
    valid("metrics", METRICS)
    valid("metrics", {**METRICS, "devices": {}})


def test_json_batches_validate_and_wrap_only_samples():
    valid("accelerometer", {"batch": [ACCEL, {**ACCEL, "seq": 813}]})
    valid("device-motion", {"batch": [MOTION]})
    invalid("accelerometer", {"batch": []}, "should be non-empty")
    invalid("accelerometer", {"batch": [ACCEL], "seq": 1}, "Additional properties")
    invalid("gyroscope", {"batch": [ACCEL]}, "rotationRate")


def test_decoded_binary_batches_validate_against_the_sample_schemas():
    raw = decode("motion/d/gyroscope", header(2, 2, 7) + raw_record(1, 2, 0.1, 0.2, 0.3) + raw_record(1.1, 2.1, 0.1, 0.2, 0.3))
    for sample in raw:
        assert not schemas.sample_errors("gyroscope", sample)
    for frame in range(4):
        heading = -1 if frame < 2 else 359.9999
        record = motion_record(1, 2, (0.1, 0.2, 0.3, 0.927), (0, 0, 0), (0, 0, -1), (0, 0, 0), (20, 0, -40), heading, 3, frame)
        (sample,) = decode("motion/d/device-motion", header(4, 1, 1) + record)
        assert not schemas.sample_errors("device-motion", sample), sample


@pytest.mark.parametrize(
    ("kind", "change", "fragment"),
    [
        ("accelerometer", lambda d: d.pop("seq"), "'seq' is a required property"),
        ("accelerometer", lambda d: d.update(seq=0), "less than the minimum of 1"),
        ("accelerometer", lambda d: d.update(clockSynchronized=True), "False was expected"),
        ("accelerometer", lambda d: d.update(extra=1), "Additional properties"),
        ("accelerometer", lambda d: d["acceleration"].update(x=None), "None is not of type 'number'"),
        ("device-motion", lambda d: d.update(referenceFrame="xArbitraryZVertical"), "-1 was expected"),
        ("device-motion", lambda d: d.update(heading=361), "361 is not valid"),
        ("device-motion", lambda d: d["magneticField"].update(accuracy="great"), "'great' is not one of"),
        ("device-motion", lambda d: d["attitude"].pop("rotationMatrix"), "'rotationMatrix' is a required property"),
        ("device-motion", lambda d: d["attitude"].update(pitch=1.6), "greater than the maximum"),
    ],
)
def test_near_misses_of_samples_are_refused(kind, change, fragment):
    payload = copy.deepcopy(ACCEL if kind == "accelerometer" else MOTION)
    change(payload)
    invalid(kind, payload, fragment)


def test_the_status_variants_are_exclusive():
    invalid("status", {**WILL, "streams": BIRTH["streams"]}, "False schema does not allow")
    invalid("status", {**BIRTH, "reason": "connection lost"}, "is not valid under any of the given schemas")
    invalid("status", {k: v for k, v in BIRTH.items() if k != "outbox"}, "is not valid under any of the given schemas")
    invalid("status", {k: v for k, v in BIRTH.items() if k != "configuration"},
            "is not valid under any of the given schemas")
    invalid("status", {**WILL, "configuration": BIRTH["configuration"]}, "False schema does not allow")
    invalid("status", {**BIRTH, "schemaVersion": 2}, "1 was expected")
    durable = {**BIRTH, "outbox": {**BIRTH["outbox"], "durableAppended": 1}}
    invalid("status", durable, "is not valid under any of the given schemas")
    streams = copy.deepcopy(BIRTH["streams"])
    streams["gyroscope"]["referenceFrame"] = "xArbitraryZVertical"
    invalid("status", {**BIRTH, "streams": streams}, "Unevaluated properties are not allowed")


CONTROL_EXAMPLES = [
    {"id": "7f1c2a", "command": "set-rate", "stream": "gyroscope", "rate_hz": 50, "timestamp": 1763700000.5},
    {"id": "1", "command": "stop", "stream": "magnetometer"},
    {"id": "2", "command": "set-rate", "stream": "gyroscope", "rate_hz": 500},
    {"id": "3", "command": "set-rate", "stream": "magnetometer", "interval_s": 0.2},
    {"id": "4", "command": "set-qos", "stream": "pedometer", "qos": 1},
    {"id": "5", "command": "set-retain", "stream": "device-motion", "retain": True},
    {"id": "11", "command": "set-batch", "stream": "accelerometer", "batch": 40, "encoding": "binary"},
    {"id": "12", "command": "set-batch", "stream": "device-motion", "batch": 10},
    {"id": "6", "command": "set-reference-frame", "frame": "xMagneticNorthZVertical"},
    {"id": "7", "command": "reset-pedometer"},
    {"id": "16", "command": "confirm-fall"},
    {"id": "17", "command": "dismiss-fall"},
    {"id": "18", "command": "confirm-fall", "date": 1795241100.25},
    {"id": "13", "command": "query-pedometer", "from": "2026-11-21T06:00:00Z", "to": "2026-11-21T07:00:00Z"},
    {"id": "14", "command": "query-activity", "from": 1795240800, "to": 1795244400},
    {"id": "15", "command": "reload-config"},
    {"id": "8", "command": "status"},
    {"id": "9", "command": "list-streams"},
    {"id": "10", "command": "ping"},
]


@pytest.mark.parametrize("command", CONTROL_EXAMPLES, ids=lambda c: c["command"] + "-" + c["id"])
def test_the_documented_commands_validate(command):
    valid("control", command)


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ({"command": "ping"}, "'id' is a required property"),
        ({"id": "", "command": "ping"}, "should be non-empty"),
        ({"id": "1", "command": "fly"}, "'fly' is not one of"),
        ({"id": "1", "command": "ping", "extra": 1}, "Unevaluated properties are not allowed ('extra'"),
        ({"id": "1", "command": "start"}, "'stream' is a required property"),
        ({"id": "1", "command": "start", "stream": "barometer"}, "'barometer' is not one of"),
        ({"id": "1", "command": "set-rate", "stream": "gyroscope"}, "is not valid under any of the given schemas"),
        ({"id": "1", "command": "set-rate", "stream": "gyroscope", "rate_hz": 5, "interval_s": 0.2}, "is valid under each of"),
        ({"id": "1", "command": "set-rate", "stream": "gyroscope", "rate_hz": 0}, "less than or equal to the minimum of 0"),
        ({"id": "1", "command": "set-qos", "stream": "gyroscope", "qos": 3}, "3 is not one of [0, 1, 2]"),
        ({"id": "1", "command": "set-batch", "stream": "pedometer", "batch": 5}, "'pedometer' is not one of"),
        ({"id": "1", "command": "set-batch", "stream": "gyroscope", "batch": 2.5}, "2.5 is not of type 'integer'"),
        ({"id": "1", "command": "set-batch", "stream": "gyroscope", "batch": 5, "encoding": "xml"}, "is not valid under any of the given schemas"),
        ({"id": "1", "command": "set-reference-frame", "frame": "north"}, "'north' is not one of"),
        ({"id": "1", "command": "query-activity", "from": 1}, "'to' is a required property"),
        ({"id": "1", "command": "ping", "stream": "gyroscope"}, "Unevaluated properties are not allowed ('stream'"),
    ],
)
def test_commands_the_agent_refuses_are_refused(command, fragment):
    invalid("control", command, fragment)


def test_signed_envelopes_and_their_inner_command():
    inner = {"target": "motion/imu-17/control", "counter": 1763700000000001, "command": "status", "id": "42"}
    signature = base64.b64encode(bytes(64)).decode()
    envelope = {"key": "ops-1", "signature": signature, "signed": base64.b64encode(json.dumps(inner).encode()).decode()}
    valid("control", envelope)
    assert not schemas.signed_command_errors(inner)
    assert schemas.signed_command_errors({"command": "status", "id": "42"})
    assert schemas.signed_command_errors({**inner, "counter": 0})
    assert schemas.signed_command_errors({**inner, "counter": 1.5})
    invalid("control", {**envelope, "id": "42"}, "is not valid under any of the given schemas")
    invalid("control", {k: v for k, v in envelope.items() if k != "key"}, "is not valid under any of the given schemas")
    invalid("control", {**envelope, "signature": "ab" * 32}, "is not valid under any of the given schemas")


def test_the_documented_replies_validate():
    stream_state = {"available": True, "enabled": True, "qos": 0, "rateHz": 50, "requestedRateHz": 50, "retain": False, "batch": 1, "encoding": "json"}
    reply = {"code": 200, "device": "imu-17", "id": "7f1c2a", "message": "ok", "ok": True}
    valid("control/reply", {**reply, "result": stream_state})
    valid("control/reply", {**reply, "result": {**stream_state, "referenceFrame": "xMagneticNorthZVertical"}})
    valid("control/reply", {**reply, "result": {"numberOfSteps": 0}})
    valid("control/reply", {**reply, "result": {"time": 1763700000.61}})
    valid("control/reply", {**reply, "result": {"date": 1795241100.25, "resolution": "confirmed", "peakAcceleration": 4.2,
                                                "orientationChange": 1.38, "detectionDate": 1795241102.3, "resolutionDate": 1795241131.02}})
    valid("control/reply", {**reply, "result": BIRTH})
    valid("control/reply", {**reply, "result": BIRTH["streams"]})
    valid("control/reply", {**reply, "result": {"changedStreams": ["accelerometer"], "needsRestart": ["mqtt"], "message": "applied to: accelerometer; restart the agent to apply: mqtt"}})
    valid("control/reply", {**reply, "result": {"startDate": 1, "endDate": 2, "numberOfSteps": 412, "distance": 301.7, "floorsAscended": 0,
                                                "floorsDescended": 0, "averageActivePace": 0.79, "currentPace": None, "currentCadence": None}})
    valid("control/reply", {**reply, "result": [{"startDate": 1, "stationary": False, "walking": True, "running": False, "cycling": False,
                                                 "automotive": False, "unknown": False, "confidence": "high"}]})
    valid("control/reply", {"code": 429, "device": "imu-17", "id": None, "message": "too many commands", "ok": False})
    invalid("control/reply", {**reply, "code": 400}, "is not valid under any of the given schemas")
    invalid("control/reply", reply, "is not valid under any of the given schemas")
    invalid("control/reply", {"code": 404, "device": "d", "id": "1", "message": "unknown", "ok": False, "result": {"time": 1}}, "is not valid under any of the given schemas")
    invalid("control/reply", {**reply, "result": {"time": 1, "extra": 2}}, "is not valid under any of the given schemas")


def test_device_motion_accuracies_are_degrees_and_minus_one_only_for_heading():
    without = {k: v for k, v in MOTION.items() if k not in ("inclinationAccuracy", "headingAccuracy")}
    valid("device-motion", without)  # binary batch records carry neither
    valid("device-motion", dict(MOTION, headingAccuracy=-1, referenceFrame="xArbitraryZVertical", heading=-1))
    valid("device-motion", dict(MOTION, headingAccuracy=180))
    invalid("device-motion", dict(MOTION, inclinationAccuracy=-1), "inclinationAccuracy")
    invalid("device-motion", dict(MOTION, headingAccuracy=181), "headingAccuracy")
    invalid("device-motion", dict(MOTION, headingAccuracy="1.2"), "headingAccuracy")
