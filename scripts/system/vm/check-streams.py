#!/usr/bin/env python3
"""Checks what the agent published from the real drivers against what the uhid emulator fed them.

    check-streams.py TRUTH.json CAPTURE.txt SCALES.json [--min N] [--no-altimeter]

CAPTURE.txt: `mosquitto_sub -v` lines (topic, space, JSON). SCALES.json: the drivers' in_*_scale values read in
the guest. For each of accelerometer, gyroscope, magnetometer and altimeter: every published value must equal one
of the fed samples within the driver's quantisation (half a step of the scale the driver exposes, in Core
Motion's units), the fed samples must be met in order (cycling through the replay), and the accelerometer must
carry Core Motion's sign. Device motion must run: its gravity must agree with the accelerometer at rest.
Prints one line per stream; exits 1 on the first stream that does not match.
"""
import json
import math
import sys

G = 9.80665


def load_capture(path):
    streams = {}
    with open(path) as f:
        for line in f:
            topic, _, payload = line.strip().partition(" ")
            if not payload.startswith("{"):
                continue
            streams.setdefault(topic.rsplit("/", 1)[-1] if "/altimeter/" not in topic else "altimeter-absolute",
                               []).append(json.loads(payload))
    return streams


def match_in_order(name, published, expected, tolerance):
    """In-order matching through the cycling replay: the first message may match several fed samples (a sensor at
    rest repeats its quantised values), so every start is tried and the first one the whole sequence follows
    (each next message within 64 fed samples of the previous one) wins. Returns the worst error."""
    n = len(expected)

    def error(value, i):
        return max(abs(a - b) for a, b in zip(value, expected[i]))

    def follow(start):
        position, worst = start, error(published[0], start)
        for k in range(1, len(published)):
            step = next((s for s in range(0, 64) if error(published[k], (position + s) % n) <= tolerance), None)
            if step is None:
                return None, k
            position = (position + step) % n
            worst = max(worst, error(published[k], position))
        return worst, len(published)

    furthest = (0, None)
    for start in (i for i in range(n) if error(published[0], i) <= tolerance):
        worst, reached = follow(start)
        if worst is not None:
            return worst
        furthest = max(furthest, (reached, start), key=lambda t: t[0])
    k = furthest[0]
    value = published[k]
    best = min(range(n), key=lambda i: error(value, i))
    sys.exit(f"FAIL {name}: message {k} {value} matches no fed sample within {tolerance:g} in order "
             f"(nearest fed sample #{best}: {expected[best]})")


def main() -> None:
    truth = json.load(open(sys.argv[1]))
    streams = load_capture(sys.argv[2])
    scales = json.load(open(sys.argv[3]))
    minimum = int(sys.argv[sys.argv.index("--min") + 1]) if "--min" in sys.argv else 20
    raw = truth["raw"]
    # The driver's step in Core Motion's units: IIO accel is m/s² (→ g), anglvel rad/s, magn gauss (→ µT).
    steps = {
        "accelerometer": scales["accel"] / G,
        "gyroscope": scales["anglvel"],
        "magnetometer": scales["magn"] * 100,
    }
    for name, column, sign in (("accelerometer", 0, -1), ("gyroscope", 3, 1), ("magnetometer", 6, 1)):
        key = {"accelerometer": "acceleration", "gyroscope": "rotationRate", "magnetometer": "magneticField"}[name]
        messages = streams.get(name, [])
        if len(messages) < minimum:
            sys.exit(f"FAIL {name}: {len(messages)} messages captured, at least {minimum} expected")
        published = [[m[key][a] for a in "xyz"] for m in messages]
        # Exact: what the driver delivers (raw × its scale) in Core Motion's units and sign.
        quantised = [[sign * r[column + a] * steps[name] for a in range(3)] for r in raw]
        exact = match_in_order(name, published, quantised, 2e-6 + 1e-9 * 100)
        # Within the quantisation of the original recording.
        original = match_in_order(name, published, truth[name], steps[name] / 2 + 2e-6)
        print(f"ok {name}: {len(messages)} messages, worst error {exact:.2g} against raw×scale, "
              f"{original:.2g} against the recording (step {steps[name]:.3g})")
    accel = [[m["acceleration"][a] for a in "xyz"] for m in streams["accelerometer"]]
    if sum(a[2] for a in accel) / len(accel) > -0.5:
        sys.exit("FAIL accelerometer: the mean z is not near -1 g at rest face up: the sign convention is wrong")
    if "--no-altimeter" not in sys.argv:
        altimeter = streams.get("altimeter", [])
        if len(altimeter) < 2:
            sys.exit(f"FAIL altimeter: {len(altimeter)} messages, at least 2 expected")
        # The altimeter publishes its low-passed pressure: it must stay within what was fed.
        fed = [r[9] * scales["pressure"] for r in raw]
        low, high = min(fed) - scales["pressure"], max(fed) + scales["pressure"]
        for m in altimeter:
            if not low <= m["pressure"] <= high:
                sys.exit(f"FAIL altimeter: pressure {m['pressure']} kPa is outside the fed {low:.5f}…{high:.5f} kPa")
            if not math.isfinite(m["relativeAltitude"]):
                sys.exit(f"FAIL altimeter: relativeAltitude {m['relativeAltitude']} is not finite")
        print(f"ok altimeter: {len(altimeter)} messages, pressures within the fed range")
    motion = streams.get("device-motion", [])
    if len(motion) < minimum:
        sys.exit(f"FAIL device-motion: {len(motion)} messages, at least {minimum} expected")
    last = motion[-1]
    gravity = [last["gravity"][a] for a in "xyz"]
    mean = [sum(a[i] for a in accel[-20:]) / len(accel[-20:]) for i in range(3)]
    norm = math.sqrt(sum(v * v for v in mean))
    angle = math.degrees(math.acos(max(-1, min(1, sum(g * m / norm for g, m in zip(gravity, mean))))))
    if angle > 10:
        sys.exit(f"FAIL device-motion: gravity {gravity} is {angle:.1f}° from the accelerometer's mean {mean}")
    print(f"ok device-motion: {len(motion)} messages, gravity {angle:.1f}° from the accelerometer's direction")


if __name__ == "__main__":
    main()
