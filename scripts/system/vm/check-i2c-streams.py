#!/usr/bin/env python3
"""Checks what an agent published from I2C chips (served by i2c-imu-emulator.c through the kernel's drivers)
against the recording the emulator fed them.

    check-i2c-streams.py TRUTH.json CAPTURE.txt SCALES.json --start T [--label NAME] [--min N] [--back K]
                         [--no-magnetometer] [--altimeter] [--floor HZ] [--timing OUT.json]

TRUTH.json: make-replay.py's truth (the recording in Core Motion's units and sign, the board's frame). CAPTURE.txt:
`mosquitto_sub -v` lines. SCALES.json: {"accel": in_accel_scale, "anglvel": …, "magn": …, "pressure_kPa": the
barometer's resolution} of the chips this agent reads, as their drivers report them.

The emulator writes the recording's sample of the moment (at the recording's rate) into the data registers,
quantised at the scale the driver reports, so for every stream:
- each published value is a whole number of the driver's steps (raw × scale, converted to Core Motion's units:
  the agent scaled with what the driver says, and applied the mount matrix, whose entries are 0 and ±1 here);
- each axis equals, within half a step, the recording's sample the emulator had in the registers when the agent
  read it: the emulator's sample k (cycling) is current from T + k × period on CLOCK_MONOTONIC (--start T, from
  its ready line), the agent stamps a polled sample on that clock when its reads end, and the reads (one axis
  at a time; a one-shot driver waits several sample periods each) and a late emulator write reach back up to K
  samples (--back, default 30 = 105 ms; --back-magnetometer for an on-demand magnetometer: the ak8975 driver
  takes the DRDY it finds 10 ms after asking, and the emulator, which cannot see reads, clears DRDY only when it
  serves the next request, so an emulator that falls behind under load leaves the previous measurement there);
- the accelerometer carries Core Motion's sign (face up at rest: z ≈ −1 g).
Also: device motion's gravity agrees with the accelerometer; the altimeter's pressure stays within what was fed
(--altimeter); the accelerometer's timestamps give the acquisition's rate and its timing jitter, printed and
written to --timing; --floor HZ fails when the accelerometer delivered less than HZ (a stalled poll loop: the
rate itself depends on the driver and, in a TCG guest, on QEMU, and is reported, not asserted).
"""
import json
import math
import statistics
import sys

G = 9.80665


def arg(name, default=None, cast=str):
    return cast(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def load_capture(path):
    streams = {}
    with open(path) as f:
        for line in f:
            topic, _, payload = line.strip().partition(" ")
            if payload.startswith("{"):
                streams.setdefault(topic.rsplit("/", 1)[-1], []).append(json.loads(payload))
    return streams


def check_vector(label, name, messages, key, truth, step, clock, back):
    """Each published axis must equal the recording's sample that the emulator had in the chip's registers while
    the agent read it: the agent stamps a polled sample when its reads end, so sample k = ⌊(t − start) / period⌋
    (cycling) or one up to `back` samples before it (the reads before the stamp, a late emulator write)."""
    n = len(truth)
    start, period = clock
    tolerance = step / 2 + 5.01e-7
    worst = 0.0
    for k, m in enumerate(messages):
        value = [m[key][a] for a in "xyz"]
        for a, v in enumerate(value):
            # The agent writes six decimals.
            if abs(v - round(v / step) * step) > 5.01e-7:
                sys.exit(f"FAIL {label} {name}: message {k} axis {'xyz'[a]} = {v} is not a whole number of the "
                         f"driver's steps ({step:.6g}): the agent did not scale by what the driver reports")
        now = math.floor((m["timestamp"] - start) / period)
        window = range(now - back, now + 2)
        for a, v in enumerate(value):
            error = min(abs(v - truth[j % n][a]) for j in window)
            if error > tolerance:
                nearest = min(range(n), key=lambda j: abs(v - truth[j][a]))
                sys.exit(f"FAIL {label} {name}: message {k} (t {m['timestamp']}) axis {'xyz'[a]} = {v} matches no "
                         f"recording sample {now - back}…{now + 1} (mod {n}) within {tolerance:.3g}: nearest there "
                         f"{error:.3g} off; the nearest anywhere is #{nearest} ({truth[nearest][a]})")
            worst = max(worst, error)
    return worst, tolerance


def timing(label, messages, want):
    stamps = [m["timestamp"] for m in messages]
    intervals = [b - a for a, b in zip(stamps, stamps[1:])]
    if not intervals:
        sys.exit(f"FAIL {label}: no two accelerometer timestamps")
    span = stamps[-1] - stamps[0]
    rate = len(intervals) / span if span > 0 else 0
    ordered = sorted(intervals)
    result = {
        "messages": len(stamps),
        "rate_hz": round(rate, 2),
        "interval_mean_ms": round(1000 * statistics.mean(intervals), 3),
        "interval_sd_ms": round(1000 * statistics.pstdev(intervals), 3),
        "interval_p50_ms": round(1000 * ordered[len(ordered) // 2], 3),
        "interval_p99_ms": round(1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 3),
        "interval_max_ms": round(1000 * ordered[-1], 3),
    }
    print(f"ok {label} timing: {result['messages']} samples at {rate:.1f} Hz; interval mean "
          f"{result['interval_mean_ms']} ms, sd {result['interval_sd_ms']} ms, p99 {result['interval_p99_ms']} ms, "
          f"max {result['interval_max_ms']} ms")
    if want and rate < want:
        sys.exit(f"FAIL {label}: the accelerometer delivered {rate:.1f} Hz, below the {want:g} Hz floor")
    return result


def main() -> None:
    truth = json.load(open(sys.argv[1]))
    streams = load_capture(sys.argv[2])
    scales = json.load(open(sys.argv[3]))
    label = arg("--label", "i2c")
    minimum = arg("--min", 20, int)
    back = arg("--back", 30, int)
    back_magnetometer = arg("--back-magnetometer", back, int)
    if "--start" not in sys.argv:
        sys.exit("check-i2c-streams.py: --start (the emulator's sample 0 on CLOCK_MONOTONIC, from its ready line) is required")
    clock = (arg("--start", cast=float), truth["period_s"])
    vectors = [("accelerometer", "acceleration", scales["accel"] / G), ("gyroscope", "rotationRate", scales["anglvel"])]
    if "--no-magnetometer" not in sys.argv:
        vectors.append(("magnetometer", "magneticField", scales["magn"] * 100))
    for name, key, step in vectors:
        messages = streams.get(name, [])
        if len(messages) < minimum:
            sys.exit(f"FAIL {label} {name}: {len(messages)} messages captured, at least {minimum} expected")
        reach = back_magnetometer if name == "magnetometer" else back
        worst, tolerance = check_vector(label, name, messages, key, truth[name], step, clock, reach)
        print(f"ok {label} {name}: {len(messages)} messages, whole steps of {step:.4g}, every axis within "
              f"{tolerance:.3g} of the recording's sample at its time (worst {worst:.2g}, window {reach} samples back)")
    accel = [[m["acceleration"][a] for a in "xyz"] for m in streams["accelerometer"]]
    mean = [sum(a[i] for a in accel) / len(accel) for i in range(3)]
    if mean[2] > -0.5:
        sys.exit(f"FAIL {label} accelerometer: the mean {mean} is not near z = -1 g at rest face up: sign or mount wrong")
    result = {"timing": timing(label, streams["accelerometer"], arg("--floor", 0, float))}
    if "--altimeter" in sys.argv:
        altimeter = streams.get("altimeter", [])
        if len(altimeter) < 2:
            sys.exit(f"FAIL {label} altimeter: {len(altimeter)} messages, at least 2 expected")
        resolution = scales["pressure_kPa"]
        low, high = min(truth["pressure_kPa"]) - resolution, max(truth["pressure_kPa"]) + resolution
        for m in altimeter:
            if not low <= m["pressure"] <= high or not math.isfinite(m["relativeAltitude"]):
                sys.exit(f"FAIL {label} altimeter: {m} is outside the fed {low:.6f}…{high:.6f} kPa")
        print(f"ok {label} altimeter: {len(altimeter)} messages, pressures within the fed range ± {resolution:g} kPa")
    motion = streams.get("device-motion", [])
    if len(motion) < minimum:
        sys.exit(f"FAIL {label} device-motion: {len(motion)} messages, at least {minimum} expected")
    gravity = [motion[-1]["gravity"][a] for a in "xyz"]
    recent = [sum(a[i] for a in accel[-20:]) / len(accel[-20:]) for i in range(3)]
    norm = math.sqrt(sum(v * v for v in recent))
    angle = math.degrees(math.acos(max(-1, min(1, sum(g * m / norm for g, m in zip(gravity, recent))))))
    if angle > 10:
        sys.exit(f"FAIL {label} device-motion: gravity {gravity} is {angle:.1f}° from the accelerometer's {recent}")
    print(f"ok {label} device-motion: {len(motion)} messages, gravity {angle:.1f}° from the accelerometer's direction")
    if "--timing" in sys.argv:
        with open(arg("--timing"), "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
