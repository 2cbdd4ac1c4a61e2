#!/usr/bin/env python3
"""Calibration of the device-motion 1-sigma estimates on BROAD (Laidig et al., Data 6(7):72, 2021, CC-BY-4.0).

For each trial: runs `motion-bench broad --output Q.csv --sigma-output S.csv`, computes the true inclination and
heading errors over the moving samples as ../shared/tools/score_broad.py defines them
(e = q_est * conj(q_ref); heading = 2 atan|z/w|; inclination = 2 acos sqrt(w^2 + z^2)), and prints the share of
moving samples whose error is within 2 sigma (a calibrated Gaussian sigma gives about 95 %) and the Pearson
correlation between sigma and the error.

The model's few global constants (AttitudeUncertainty) were fitted on the even trials of the sorted list
(02, 11, 27); the odd ones (07, 25, 32) are held out. The split column says which.

Usage: python3 scripts/broad_uncertainty.py [--bench .build/debug/motion-bench] [--data ../shared/data/broad]
Needs numpy.
"""
import argparse
import glob
import os
import subprocess
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def qmul(a, b):
    w1, x1, y1, z1 = a.T
    w2, x2, y2, z2 = b.T
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(ROOT, ".build", "release", "motion-bench"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "broad"))
    args = ap.parse_args()
    print("trial                        split  incl: within 2σ  corr  mean σ  rms err | heading: within 2σ  corr  mean σ  rms err")
    for index, trial in enumerate(sorted(glob.glob(os.path.join(args.data, "*.csv")))):
        with tempfile.TemporaryDirectory() as d:
            q_path, s_path = os.path.join(d, "q.csv"), os.path.join(d, "s.csv")
            subprocess.run([args.bench, "broad", "--trial", trial, "--output", q_path, "--sigma-output", s_path],
                           check=True, stdout=subprocess.DEVNULL)
            t = np.genfromtxt(trial, delimiter=",", names=True)
            est = np.genfromtxt(q_path, delimiter=",", names=True)
            sig = np.genfromtxt(s_path, delimiter=",", names=True)
        ref = np.column_stack([t["opt_qw"], t["opt_qx"], t["opt_qy"], t["opt_qz"]])
        q = np.column_stack([est["qw"], est["qx"], est["qy"], est["qz"]])
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        ref /= np.linalg.norm(ref, axis=1, keepdims=True)
        ref[:, 1:] *= -1
        e = qmul(q, ref)
        w, z = e[:, 0], e[:, 3]
        heading = np.degrees(2 * np.arctan(np.abs(z / w)))
        incl = np.degrees(2 * np.arccos(np.clip(np.sqrt(w ** 2 + z ** 2), 0, 1)))
        mov = t["movement"].astype(bool) & np.isfinite(heading) & np.isfinite(incl)
        row = os.path.basename(trial)[:28].ljust(28) + ("  fit " if index % 2 == 0 else "  held")
        for err, s in ((incl, sig["sigma_inclination"]), (heading, sig["sigma_heading"])):
            err, s = err[mov], s[mov]
            within = 100 * np.mean(err <= 2 * s)
            corr = np.corrcoef(s, err)[0, 1] if np.std(s) > 0 else float("nan")
            row += f"   {within:6.1f} %  {corr:+.2f}  {np.mean(s):5.2f}°  {np.sqrt(np.mean(err ** 2)):5.2f}° |"
        print(row)


main()
