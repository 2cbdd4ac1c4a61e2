"""Checks a capture of a real agent's MQTT traffic against docs/schemas and the reference decoder.

    python check_capture.py --schemas docs/schemas [--require-coverage] capture.json

The capture (written by Tests/EndToEndTests/SchemaEndToEndTests.swift) is a JSON object
`{"capturedAt": <Unix s>, "messages": [{"topic", "payload" (base64), "qos", "retain"}, …]}` in arrival order.

For every message: JSON payloads are validated against their topic's schema (Draft 2020-12, formats not
checked); the streams' numbers must be plain decimals (never exponent form, as docs/payloads.md promises —
Foundation's encoders behind status, metrics and replies do not keep that promise, so those are not held to it);
binary batches are decoded with motion_agent_client and each decoded sample is validated against the stream's
`$defs/sample`; the inner command of a signed envelope against `$defs/signedCommand`. Then, per topic: `seq` runs 1, 2, 3, … across
single samples and batches, timestamps advance, and the values are sane (|gravity| = 1 g, unit quaternions, the
rotation matrix and Euler angles agree with the quaternion, gravity = −(m31, m32, m33), a plausible |a|, |B|,
pressure…). Commands are matched with their replies by id: each answered exactly once, with 200 — or, when its id
starts with `bad-` (the schema must refuse it too) or `refused-` (valid, but refused by the agent: unsigned while
signing is on, a bad signature), with a refusal.

With --require-coverage it also fails unless every kind of topic, every shape of the sample streams (single
JSON, JSON batch, binary batch), binary device-motion records with the accuracies and with a relativeAttitude
(layout version 2), all four device-motion reference frames, the three status variants, both
command envelopes and both reply outcomes were seen, so a run that captured little cannot pass.

Exit status 0 when everything holds; 1 with the list of problems otherwise.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from motion_agent_client import SAMPLE_STREAMS, STREAM_SCHEMAS, parse_binary_batch, topic_kind  # noqa: E402

BASE_ID = "https://motion-agent.invalid/schemas/v1/"

#: topic kind → its schema file in docs/schemas.
SCHEMA_FILES = {
    **STREAM_SCHEMAS,
    "status": "status.schema.json",
    "configuration": "configuration.schema.json",
    "metrics": "metrics.schema.json",
    "control": "control-request.schema.json",
    "control/reply": "control-reply.schema.json",
}
#: Kinds a capture need not contain for --require-coverage: a motion event needs a drop or a fall, which the
#: simulated scenarios the end-to-end capture runs do not have (EventsStreamTests covers the payloads).
OPTIONAL_KINDS = {"events"}

#: Topics whose payloads the agent writes with PayloadEncoder: fixed decimals, a fixed key order.
STREAM_KINDS = [k for k in SCHEMA_FILES if k not in ("status", "configuration", "metrics", "control", "control/reply")]
FRAMES = ["xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical", "xTrueNorthZVertical"]


def _messages(error: Any, depth: int = 0) -> list[str]:
    """An error and, for oneOf/anyOf, why each alternative failed — the bare message hides the reason."""
    path = "/".join(str(p) for p in error.absolute_path) or "(root)"
    # jsonschema quotes the whole instance in some messages ("{…} is not valid under any of the given schemas").
    message = error.message if len(error.message) <= 240 else error.message[:160] + " … " + error.message[-60:]
    out = [("  " * depth) + f"{path}: {message}"]
    for sub in sorted(error.context or [], key=lambda e: (list(e.schema_path), e.message)):
        out.extend(_messages(sub, depth + 1))
    return out


class Schemas:
    """docs/schemas loaded into one registry, with a validator per topic kind."""

    def __init__(self, directory: Path):
        docs = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(directory).glob("*.schema.json"))}
        if not docs:
            raise SystemExit(f"no *.schema.json in {directory}")
        registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs.values())

        def validator(ref: str) -> Draft202012Validator:
            return Draft202012Validator({"$ref": ref}, registry=registry)

        self.by_kind = {kind: validator(BASE_ID + file) for kind, file in SCHEMA_FILES.items()}
        self.samples = {s: validator(BASE_ID + SCHEMA_FILES[s] + "#/$defs/sample") for s in SAMPLE_STREAMS}
        self.signed_command = validator(BASE_ID + "control-request.schema.json#/$defs/signedCommand")
        self.status_birth = validator(BASE_ID + "status.schema.json#/$defs/birth")

    @staticmethod
    def _errors(validator: Draft202012Validator, value: Any) -> list[str]:
        out: list[str] = []
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
            out.extend(_messages(error))
        return out

    def errors(self, kind: str, value: Any) -> list[str]:
        return self._errors(self.by_kind[kind], value)

    def sample_errors(self, stream: str, value: Any) -> list[str]:
        return self._errors(self.samples[stream], value)

    def signed_command_errors(self, value: Any) -> list[str]:
        return self._errors(self.signed_command, value)


def _norm(v: dict[str, Any]) -> float:
    return math.sqrt(sum(v[k] ** 2 for k in v))


def _matrix(q: dict[str, Any]) -> dict[str, float]:
    """The rotation matrix of a quaternion (normalised first), rows m1x, m2x, m3x."""
    x, y, z, w = (q[k] / _norm(q) for k in "xyzw")
    return {
        "m11": 1 - 2 * (y * y + z * z), "m12": 2 * (x * y - w * z), "m13": 2 * (x * z + w * y),
        "m21": 2 * (x * y + w * z), "m22": 1 - 2 * (x * x + z * z), "m23": 2 * (y * z - w * x),
        "m31": 2 * (x * z - w * y), "m32": 2 * (y * z + w * x), "m33": 1 - 2 * (x * x + y * y),
    }  # fmt: skip


def _angle_difference(a: float, b: float) -> float:
    d = (a - b) % (2 * math.pi)
    return min(d, 2 * math.pi - d)


class Checker:
    def __init__(self, schemas: Schemas, captured_at: float):
        self.schemas = schemas
        self.captured_at = captured_at
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.kinds: Counter[str] = Counter()
        #: (root, kind) → samples in arrival order (a batch contributes each of its samples)
        self.series: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self.shapes: dict[str, set[str]] = defaultdict(set)
        self.frames: dict[str, set[str]] = defaultdict(set)
        self.status_variants: set[str] = set()
        self.envelopes: set[str] = set()
        #: command id → (expectation, topic)
        self.commands: dict[str, tuple[str, str]] = {}
        self.unreadable_commands = 0
        self.replies: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
        self.reply_outcomes: set[str] = set()
        self.compass_headings = 0
        self.relative_attitudes = 0
        #: binary device-motion records (layout version 2) with the attitude accuracies / with a relativeAttitude
        self.binary_accuracies = 0
        self.binary_relative_attitudes = 0

    def problem(self, where: str, text: str) -> None:
        self.problems.append(f"{where}: {text}")

    # MARK: - One message

    def message(self, index: int, topic: str, payload: bytes) -> None:
        where = f"message {index} on {topic}"
        kind = topic_kind(topic)
        if kind is None:
            self.problem(where, "a topic the agent does not use")
            return
        self.kinds[kind] += 1
        root = topic[: -len(kind)].rstrip("/")
        if payload[:1] == b"M":
            self.binary(where, root, kind, topic, payload)
            return
        exponents: list[str] = []

        def number(text: str) -> float | int:
            if "e" in text or "E" in text:
                exponents.append(text)
            return float(text) if any(c in text for c in ".eE") else int(text)

        try:
            value = json.loads(payload.decode("utf-8"), parse_float=number, parse_int=number)
        except (UnicodeDecodeError, ValueError) as e:
            if kind == "control":
                # A deliberately malformed command: the agent must answer 400 with id null.
                self.unreadable_commands += 1
                return
            self.problem(where, f"not JSON: {e}: {payload[:80]!r}")
            return
        if exponents and kind in STREAM_KINDS:
            # JSONBuffer never writes exponents; status, metrics and replies come from Foundation's JSONEncoder and
            # JSONSerialization, which write 1e-05 for 0.00001, so for them the promise does not hold.
            self.problem(where, f"numbers in exponent form {exponents[:3]} (docs/payloads.md: plain decimals only)")
        errors = self.schemas.errors(kind, value)
        if kind == "control":
            self.command(where, value, errors)
            return
        if errors:
            self.problem(where, f"does not match {SCHEMA_FILES[kind]}:\n    " + "\n    ".join(errors[:12]))
            return
        if kind in SAMPLE_STREAMS:
            if "batch" in value:
                self.shapes[kind].add("json batch")
                self.series[(root, kind)].extend(value["batch"])
            else:
                self.shapes[kind].add("single")
                self.series[(root, kind)].append(value)
        elif kind == "status":
            variant = "birth" if value["state"] == "online" else ("will" if value["reason"] == "connection lost" else "goodbye")
            self.status_variants.add(variant)
        elif kind == "control/reply":
            self.replies[value["id"]].append(value)
            self.reply_outcomes.add("ok" if value["ok"] else "refused")
            if value["ok"] and isinstance(value.get("result"), dict) and value["result"].get("state") == "online":
                # The status command's result is the birth document.
                for e in self.schemas._errors(self.schemas.status_birth, value["result"]):
                    self.problem(where, f"status result: {e}")
        elif kind in STREAM_KINDS:
            self.series[(root, kind)].append(value)

    def binary(self, where: str, root: str, kind: str, topic: str, payload: bytes) -> None:
        try:
            batch = parse_binary_batch(payload, topic)
        except ValueError as e:
            self.problem(where, str(e))
            return
        self.shapes[kind].add("binary batch")
        for sample in batch.samples:
            errors = self.schemas.sample_errors(kind, sample)
            if errors:
                self.problem(where, f"decoded sample seq {sample['seq']} does not match {SCHEMA_FILES[kind]}#/$defs/sample:\n    " + "\n    ".join(errors[:12]))
                return
        if kind == "device-motion":
            if batch.version < 2:
                self.problem(where, f"device motion in binary layout version {batch.version}: the agent writes version 2")
            self.binary_accuracies += sum("inclinationAccuracy" in s and "headingAccuracy" in s for s in batch.samples)
            self.binary_relative_attitudes += sum("relativeAttitude" in s for s in batch.samples)
        self.series[(root, kind)].extend(batch.samples)

    def command(self, where: str, value: Any, errors: list[str]) -> None:
        inner = value
        if isinstance(value, dict) and "signed" in value and not errors:
            self.envelopes.add("signed")
            try:
                inner = json.loads(base64.b64decode(value["signed"], validate=True))
            except ValueError as e:
                self.problem(where, f"signed is not base64 of JSON: {e}")
                return
            inner_errors = self.schemas.signed_command_errors(inner)
            if inner_errors and not str(inner.get("id", "")).startswith("bad-"):
                self.problem(where, "the signed command does not match $defs/signedCommand:\n    " + "\n    ".join(inner_errors[:12]))
        elif isinstance(value, dict):
            self.envelopes.add("command")
        command_id = inner.get("id") if isinstance(inner, dict) else None
        if not isinstance(command_id, str):
            self.problem(where, f"a command without a string id: {value}")
            return
        bad = command_id.startswith("bad-")
        if bad and not errors and inner is value:
            self.problem(where, f"the command {command_id} is meant to be refused, but control-request.schema.json accepts it: {value}")
        if not bad and errors:
            self.problem(where, "does not match control-request.schema.json:\n    " + "\n    ".join(errors[:12]))
        expectation = "refused" if bad or command_id.startswith("refused-") else "ok"
        if command_id in self.commands:
            self.problem(where, f"the test sent the id {command_id} twice")
        self.commands[command_id] = (expectation, where)

    # MARK: - Across messages

    def finish(self, require_coverage: bool) -> None:
        for (root, kind), series in sorted(self.series.items()):
            self.sequence(f"{root}/{kind}", kind, series)
            for sample in series:
                self.sanity(f"{root}/{kind} seq {sample.get('seq')}", kind, sample)
                if kind == "device-motion":
                    self.frames[sample["referenceFrame"]].add(root)
                    if sample["heading"] != -1:
                        self.compass_headings += 1
            if kind == "accelerometer" and series:
                mean = sum(_norm(s["acceleration"]) for s in series) / len(series)
                if not 0.85 <= mean <= 1.15:
                    self.problem(f"{root}/{kind}", f"mean |acceleration| {mean:.3f} g over {len(series)} samples, expected about 1 g")
        self.answers()
        if require_coverage:
            self.coverage()

    def sequence(self, where: str, kind: str, series: list[dict[str, Any]]) -> None:
        seqs = [s["seq"] for s in series]
        if seqs and seqs[0] != 1:
            self.problem(where, f"the first seq is {seqs[0]}, expected 1 (the subscriber was there before the agent)")
        for i in range(1, len(seqs)):
            if seqs[i] != seqs[i - 1] + 1:
                self.problem(where, f"seq jumps from {seqs[i - 1]} to {seqs[i]} (sample {i})")
                break
        stamps = [s["timestamp"] for s in series]
        strict = kind in SAMPLE_STREAMS
        for i in range(1, len(stamps)):
            if stamps[i] < stamps[i - 1] or (strict and stamps[i] == stamps[i - 1]):
                self.problem(where, f"timestamp goes from {stamps[i - 1]} to {stamps[i]} at seq {seqs[i]}")
                break
        # time and timestamp are two clocks for the same instant: their offset stays put.
        offsets = [s["time"] - s["timestamp"] for s in series]
        if offsets and max(offsets) - min(offsets) > 1:
            self.problem(where, f"time − timestamp varies by {max(offsets) - min(offsets):.3f} s")
        if series and "clockSynchronized" not in series[-1]:
            age = abs(series[-1]["time"] - self.captured_at)
            if age > 3600:
                self.problem(where, f"time {series[-1]['time']} is {age:.0f} s from the capture's, with the clock synchronized")

    def sanity(self, where: str, kind: str, s: dict[str, Any]) -> None:
        def expect(condition: bool, text: str) -> None:
            if not condition:
                self.problem(where, text)

        if kind == "accelerometer":
            expect(_norm(s["acceleration"]) < 16, f"|acceleration| {_norm(s['acceleration']):.2f} g")
        elif kind == "gyroscope":
            expect(_norm(s["rotationRate"]) < 35, f"|rotationRate| {_norm(s['rotationRate']):.2f} rad/s")
        elif kind == "magnetometer":
            expect(10 < _norm(s["magneticField"]) < 120, f"|magneticField| {_norm(s['magneticField']):.1f} µT")
        elif kind == "device-motion":
            self.device_motion(s, expect)
        elif kind == "pedometer":
            expect(s["endDate"] >= s["startDate"], "endDate before startDate")
        elif kind == "altimeter":
            expect(30 < s["pressure"] < 110, f"pressure {s['pressure']} kPa")
        elif kind == "altimeter/absolute":
            expect(-500 < s["altitude"] < 9000, f"altitude {s['altitude']} m")
        elif kind == "submersion":
            expect(30 < s["surfacePressure"] < 110, f"surfacePressure {s['surfacePressure']} kPa")

    def device_motion(self, s: dict[str, Any], expect: Any) -> None:
        q = s["attitude"]["quaternion"]
        expect(abs(_norm(q) - 1) < 1e-3, f"|quaternion| = {_norm(q):.6f}, expected 1")
        g = s["gravity"]
        expect(abs(_norm(g) - 1) < 1e-3, f"|gravity| = {_norm(g):.6f} g, expected 1 g")
        x, y, z, w = (q[k] / _norm(q) for k in "xyzw")
        expected = {
            "m11": 1 - 2 * (y * y + z * z), "m12": 2 * (x * y - w * z), "m13": 2 * (x * z + w * y),
            "m21": 2 * (x * y + w * z), "m22": 1 - 2 * (x * x + z * z), "m23": 2 * (y * z - w * x),
            "m31": 2 * (x * z - w * y), "m32": 2 * (y * z + w * x), "m33": 1 - 2 * (x * x + y * y),
        }  # fmt: skip
        m = s["attitude"]["rotationMatrix"]
        worst = max(abs(m[k] - expected[k]) for k in expected)
        expect(worst < 2e-5, f"rotationMatrix differs from the quaternion's by {worst:.2e}")
        gap = max(abs(g["x"] + m["m31"]), abs(g["y"] + m["m32"]), abs(g["z"] + m["m33"]))
        expect(gap < 1e-3, f"gravity differs from −(m31, m32, m33) by {gap:.2e}")
        pitch = math.asin(max(-1, min(1, expected["m32"])))
        roll = math.atan2(-expected["m31"], expected["m33"])
        yaw = math.atan2(-expected["m12"], expected["m22"])
        if abs(expected["m32"]) < 0.999:
            a = s["attitude"]
            worst_angle = max(_angle_difference(a["roll"], roll), abs(a["pitch"] - pitch), _angle_difference(a["yaw"], yaw))
            expect(worst_angle < 1e-4, f"roll/pitch/yaw differ from the quaternion's by {worst_angle:.2e} rad")
        if "relativeAttitude" in s:
            # The same forms as `attitude`, of reference⁻¹ ⊗ attitude (set-reference-attitude).
            self.relative_attitudes += 1
            r = s["relativeAttitude"]
            expect(abs(_norm(r["quaternion"]) - 1) < 1e-3, f"|relativeAttitude.quaternion| = {_norm(r['quaternion']):.6f}")
            rm = _matrix(r["quaternion"])
            worst_r = max(abs(r["rotationMatrix"][k] - rm[k]) for k in rm)
            expect(worst_r < 2e-5, f"relativeAttitude.rotationMatrix differs from its quaternion's by {worst_r:.2e}")
            if abs(rm["m32"]) < 0.999:
                angles = {"roll": math.atan2(-rm["m31"], rm["m33"]), "pitch": math.asin(rm["m32"]), "yaw": math.atan2(-rm["m12"], rm["m22"])}
                worst_a = max(_angle_difference(r[k], angles[k]) for k in angles)
                expect(worst_a < 1e-4, f"relativeAttitude roll/pitch/yaw differ from its quaternion's by {worst_a:.2e} rad")
        expect(_norm(s["userAcceleration"]) < 16, f"|userAcceleration| {_norm(s['userAcceleration']):.2f} g")
        expect(_norm(s["rotationRate"]) < 35, f"|rotationRate| {_norm(s['rotationRate']):.2f} rad/s")
        if "inclinationAccuracy" in s:  # JSON payloads and binary layout version 2 carry both; version 1 neither
            i, h = s["inclinationAccuracy"], s.get("headingAccuracy")
            expect(i is not None and 0 <= i <= 180, f"inclinationAccuracy {i}, expected 0–180°")
            arbitrary = s["referenceFrame"] == "xArbitraryZVertical"
            expect(h is not None and (h == -1 if arbitrary else 0 <= h <= 180),
                   f"headingAccuracy {h} in {s['referenceFrame']}")
        field = s["magneticField"]
        if field["accuracy"] != "uncalibrated":
            expect(10 < _norm(field["field"]) < 120, f"|magneticField.field| {_norm(field['field']):.1f} µT")
        if s["referenceFrame"] in ("xMagneticNorthZVertical", "xTrueNorthZVertical") and s["heading"] != -1:
            # The heading is the compass direction of the device's +y axis: 270° − yaw (CoreMotion's yaw is
            # counter-clockwise from north, minus 90°).
            h = (270 - math.degrees(yaw)) % 360
            d = abs(h - s["heading"]) % 360
            expect(min(d, 360 - d) < 0.01, f"heading {s['heading']}° but the attitude's is {h:.3f}°")

    def answers(self) -> None:
        for command_id, (expectation, where) in sorted(self.commands.items()):
            replies = self.replies.get(command_id, [])
            if len(replies) != 1:
                self.problem(where, f"command {command_id} was answered {len(replies)} times, expected exactly once")
                continue
            reply = replies[0]
            if expectation == "ok" and not reply["ok"]:
                self.problem(where, f"command {command_id} was refused: {reply['code']} {reply['message']}")
            if expectation == "refused" and reply["ok"]:
                self.problem(where, f"command {command_id} was applied, but the test sent it to be refused")
        answered = set(self.commands)
        for command_id, replies in self.replies.items():
            if command_id is not None and command_id not in answered:
                self.problem("control/reply", f"a reply to {command_id}, which was never sent: {replies[0]}")
        unreadable = [r for r in self.replies.get(None, []) if r["code"] == 400]
        if len(unreadable) < self.unreadable_commands:
            self.problem("control/reply", f"{self.unreadable_commands} unreadable command(s) sent, {len(unreadable)} answered 400 with id null")

    def coverage(self) -> None:
        missing = [k for k in SCHEMA_FILES if self.kinds[k] == 0 and k not in OPTIONAL_KINDS]
        if missing:
            self.problem("coverage", f"no message on: {', '.join(missing)}")
        for stream in SAMPLE_STREAMS:
            lacking = {"single", "json batch", "binary batch"} - self.shapes[stream]
            if lacking:
                self.problem("coverage", f"{stream}: no {', no '.join(sorted(lacking))}")
        frames = [f for f in FRAMES if f not in self.frames]
        if frames:
            self.problem("coverage", f"no device-motion sample in {', '.join(frames)}")
        if self.compass_headings == 0:
            self.problem("coverage", "no device-motion sample with a compass heading (0–360°)")
        if self.relative_attitudes == 0:
            self.problem("coverage", "no device-motion sample with a relativeAttitude (set-reference-attitude)")
        if self.binary_accuracies == 0:
            self.problem("coverage", "no binary device-motion record with the attitude accuracies (layout version 2)")
        if self.binary_relative_attitudes == 0:
            self.problem("coverage", "no binary device-motion record with a relativeAttitude (set-reference-attitude)")
        variants = {"birth", "will", "goodbye"} - self.status_variants
        if variants:
            self.problem("coverage", f"no status {', '.join(sorted(variants))}")
        envelopes = {"command", "signed"} - self.envelopes
        if envelopes:
            self.problem("coverage", f"no {' or '.join(sorted(envelopes))} envelope among the commands")
        if self.unreadable_commands == 0:
            self.problem("coverage", "no malformed (non-JSON) command")
        outcomes = {"ok", "refused"} - self.reply_outcomes
        if outcomes:
            self.problem("coverage", f"no {' or '.join(sorted(outcomes))} reply")

    def summary(self) -> str:
        lines = [f"{sum(self.kinds.values())} messages:"]
        for kind in SCHEMA_FILES:
            extra = ""
            if kind in SAMPLE_STREAMS:
                extra = f" ({', '.join(sorted(self.shapes[kind]))}; {sum(len(v) for (r, k), v in self.series.items() if k == kind)} samples)"
            lines.append(f"  {kind}: {self.kinds[kind]}{extra}")
        lines.append(f"  device-motion frames: {', '.join(f for f in FRAMES if f in self.frames)}; {self.compass_headings} with a heading")
        lines.append(f"  status: {', '.join(sorted(self.status_variants))}; commands: {len(self.commands)} + {self.unreadable_commands} malformed")
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a capture of the agent's MQTT traffic against docs/schemas.")
    parser.add_argument("capture", type=Path)
    parser.add_argument("--schemas", type=Path, required=True, help="the docs/schemas directory")
    parser.add_argument("--require-coverage", action="store_true", help="fail unless every payload kind was seen")
    args = parser.parse_args(argv)
    capture = json.loads(args.capture.read_text(encoding="utf-8"))
    checker = Checker(Schemas(args.schemas), capture.get("capturedAt", 0))
    for index, m in enumerate(capture["messages"]):
        checker.message(index, m["topic"], base64.b64decode(m["payload"]))
    checker.finish(args.require_coverage)
    print(checker.summary())
    if checker.problems:
        shown = checker.problems[:40]
        print(f"\n{len(checker.problems)} problem(s):")
        for p in shown:
            print("- " + p)
        if len(checker.problems) > len(shown):
            print(f"- … and {len(checker.problems) - len(shown)} more")
        return 1
    print("all payloads match docs/schemas")
    return 0


if __name__ == "__main__":
    sys.exit(main())
