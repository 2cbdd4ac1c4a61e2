#!/usr/bin/env python3
"""False falls of the shipped fall detector on other placements: DSADS, no falls, 25 Hz (BENCHMARKS.md, "Falls").

Data: the UCI Daily and Sports Activities set (Altun, Barshan, Tunçel, Pattern Recognition 43(10), 2010; Barshan &
Yüksek, The Computer Journal 57(11), 2014; CC BY 4.0): 8 subjects, 15 activities of 5 minutes each (sitting,
standing, lying, stairs, elevator, walking, treadmill walking and running, exercise bikes, jumping, basketball),
three units — torso (chest), right arm (above the wrist), right leg (above the knee, the nearest to a trouser
pocket) — at 25 Hz, below the detector's 50–200 Hz range: a lower bound on what it sees. No falls and no posture
changes between activities (each file is one activity), so this measures false falls per hour of continuous
activity in placements SisFall does not have, with the shipped set read from FallScore.swift and
FallDetector.swift.

Usage: .build/falls-venv/bin/python scripts/research/falls/dsads_false_alarms.py --data DIR/activity/dsads
"""
import argparse
import collections
import glob
import gzip
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fall_model as fm  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
G = 9.80665
UNITS = {"T": "torso", "RA": "right arm", "RL": "right leg (thigh)"}


def shipped():
    """FallScore.shipped and the gates, read from the Swift sources."""
    score = open(os.path.join(ROOT, "Sources/MotionEstimation/FallScore.swift")).read()
    block = score[score.index("static let shipped"):]
    c = {k: float(re.search(rf"{k}: (-?[0-9.e-]+)", block).group(1))
         for k in ("intercept", "logSmoothedPeak", "logEnergy", "logStillness", "gyroscopeIntercept", "logRotationRate")}
    det = open(os.path.join(ROOT, "Sources/MotionEstimation/FallDetector.swift")).read()
    d = det[det.index("static let defaults"):]
    c["gate"] = float(re.search(r"minimumOrientationChangeDegrees: (-?[0-9.]+)", d).group(1))
    c["still"] = float(re.search(r"maximumStillnessG: (-?[0-9.]+)", d).group(1))
    c["peak"] = float(re.search(r"candidatePeakG: (-?[0-9.]+)", d).group(1))
    c["tau"] = float(re.search(r"peakTimeConstantSeconds: (-?[0-9.]+)", d).group(1))
    return c


def falls(f, c, gyro):
    ok = (f["valid"] > 0) & (f["oc"] >= c["gate"]) & (f["still"] <= c["still"]) & (f["peak"] >= c["peak"])
    s = (c["intercept"] + c["logSmoothedPeak"] * np.log(np.maximum(f["speak"][:, 0], 1e-9))
         + c["logEnergy"] * np.log(np.maximum(f["energy"], 1e-3))
         + c["logStillness"] * np.log(np.maximum(f["still"], 0.005)))
    if gyro:
        s = s + c["gyroscopeIntercept"] + c["logRotationRate"] * np.log(f["gmax"] + 0.1)
    # as the detector reports them: a passing candidate within the 2 s of a reported fall belongs to that fall
    reported = 0
    last = -10**9
    for k, passed in zip(f["block"], ok & (s >= 0)):
        if passed and k > last + fm.POST[1] - 1:
            reported += 1
            last = k
    return reported


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="the DSADS folder (aNN_pM.csv.gz)")
    args = ap.parse_args()
    c = shipped()
    files = sorted(glob.glob(os.path.join(args.data, "a*_p*.csv.gz")))
    if not files:
        sys.exit(f"no DSADS files (aNN_pM.csv.gz) under {args.data}")
    hours = collections.Counter()
    found = collections.defaultdict(list)
    for path in files:
        activity = os.path.basename(path).split("_")[0]
        with gzip.open(path, "rt") as fh:
            header = fh.readline().strip().split(",")
            rows = np.loadtxt(fh, delimiter=",")
        t = rows[:, header.index("t_s")]
        # segments follow each other in time; make the clock strictly increasing at 25 Hz
        t = np.arange(len(t)) / 25.0
        for unit in UNITS:
            acc = -rows[:, [header.index(f"{unit}_acc_{a}") for a in "xyz"]] / G
            gyr = rows[:, [header.index(f"{unit}_gyro_{a}") for a in "xyz"]]
            f = fm.candidates(fm.blocks(t, acc, gyr, (c["tau"],)))
            hours[unit] += len(t) / 25 / 3600
            for gyro in (False, True):
                n = falls(f, c, gyro)
                if n:
                    found[(unit, gyro)].append(f"{os.path.basename(path).split('.')[0]}×{n}")
    print(f"DSADS, {len(files)} files, shipped set (gate {c['gate']}°, τ {c['tau']} s, intercept {c['intercept']:.4f}); false falls:")
    for unit, label in UNITS.items():
        for gyro in (False, True):
            items = found[(unit, gyro)]
            total = sum(int(x.split("×")[1]) for x in items)
            print(f"  {label:<18} {'with gyroscope' if gyro else 'accelerometer only':<19} {total:3d} in "
                  f"{hours[unit]:.1f} h ({total / hours[unit]:.2f}/h): {', '.join(items) or '-'}")


if __name__ == "__main__":
    main()
