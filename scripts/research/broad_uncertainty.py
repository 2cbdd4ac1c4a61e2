#!/usr/bin/env python3
"""Calibration of the device-motion 1-sigma estimates on BROAD (Laidig et al., Data 6(7):72, 2021, CC-BY-4.0).

For each trial: runs `motion-bench broad --output Q.csv --sigma-output S.csv --features-output F.csv`, computes
the true inclination and heading errors over the moving samples as scripts/research/score_broad.py defines them
(e = q_est * conj(q_ref); heading = 2 atan|z/w|; inclination = 2 acos sqrt(w^2 + z^2)), and prints the share of
moving samples whose error is within 2 sigma (a calibrated Gaussian sigma gives about 95 %) and the Pearson
correlation between sigma and the error.

The model (Sources/MotionEstimation/AttitudeUncertainty.swift) is rebuilt here from the filter state in the
feature dump. Its variances are sums of constant-free parts (drifts, relaxed magnetic weights, rates, the
rotation about the vertical not yet pulled back) times squared constants, so the script first checks that the
rebuilt sigma equals the bench's (the shipped constants, to 1e-9 degrees), then, with --fit, fits the constants
on the even trials of the sorted list (02, 11, 27) and prints every trial with them; the odd ones (07, 25, 32)
are held out. The fit minimises, over the fitted trials, ((within 2 sigma - 95 %) / 5 %)^2 + 0.02 / degree of
mean sigma - 2 * correlation over the moving samples, by a deterministic coordinate search from fixed starting
values; then the calibrated magnetic floor alone, from the search's bound up, against ((within 2 sigma - 95 %) /
5 %)^2 over the still samples where that is below 95 %. The `low` and `medium` floors are tied to twice `high`
(BROAD cannot tell them apart).

Usage (numpy in the project's venv, see BENCHMARKS.md):
  python3 scripts/research/broad_uncertainty.py [--bench .build/debug/motion-bench] [--data $MOTION_AGENT_DATA/broad]
                                       [--dumps DIR] [--fit]
"""
import argparse
import glob
import os
import subprocess
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEG = np.pi / 180

# AttitudeUncertainty's constants as shipped (degrees, seconds, fractions).
SHIPPED = {
    "inclination_floor": 0.2, "inclination_timing": 0.0024,
    "magnetic_uncalibrated": 3.6, "magnetic_low": 0.4, "magnetic_medium": 0.4, "magnetic_high": 0.2,
    "heading_timing": 0.0016, "gyroscope_scale": 0.004,
}
# Session 4's model (no scale term), for comparison on the same dumps (--compare).
SESSION4 = {
    "inclination_floor": 0.21, "inclination_timing": 0.0016,
    "magnetic_uncalibrated": 3.8, "magnetic_low": 1.1, "magnetic_medium": 1.1, "magnetic_high": 0.55,
    "heading_timing": 0.0024, "gyroscope_scale": 0.0,
}
# Where the fit starts (the first model's values, scale 0.5 %), and the lower bounds of the search.
START = {
    "inclination_floor": 0.3, "inclination_timing": 0.002,
    "magnetic_uncalibrated": 3.8, "magnetic_low": 1.1, "magnetic_medium": 1.1, "magnetic_high": 0.55,
    "heading_timing": 0.0024, "gyroscope_scale": 0.005,
}
STEP = {
    "inclination_floor": 0.02, "inclination_timing": 0.0002,
    "magnetic_uncalibrated": 0.2, "magnetic_low": 0.1, "magnetic_medium": 0.1, "magnetic_high": 0.05,
    "heading_timing": 0.0004, "gyroscope_scale": 0.001,
}
LOWER = {"magnetic_low": 0.05, "magnetic_medium": 0.05, "magnetic_high": 0.05, "inclination_floor": 0.05}
INCLINATION = ["inclination_floor", "inclination_timing"]
HEADING = ["magnetic_uncalibrated", "magnetic_high", "heading_timing", "gyroscope_scale"]  # low, medium: tied()
ACCELEROMETER_TAU = 3.0  # AttitudeFilterParameters.accelerometerTau


def qmul(a, b):
    w1, x1, y1, z1 = a.T
    w2, x2, y2, z2 = b.T
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=1)


def parts(f):
    """The model's constant-free parts per output sample, as AttitudeUncertainty.update builds them.

    Every BROAD row carries all three sensors, so the accelerometer is used at every output and the
    magnetometer whenever the calibrator let it steer (`steered`)."""
    t = f["t"]
    dt = np.diff(t, prepend=t[0]).tolist()
    used = (f["steered"] > 0).tolist()
    gain = np.clip(f["gain"], 0, 1).tolist()
    accuracy = f["accuracy"].astype(int).tolist()
    bias_h = np.sqrt(np.maximum(f["bias_var_h"], 0)).tolist()
    bias_v = np.sqrt(np.maximum(f["bias_var_v"], 0)).tolist()
    rate_v = f["rate_vertical"].tolist()
    n = len(dt)
    incl_drift, head_drift, rotation, start = (np.zeros(n) for _ in range(4))
    weights = np.zeros((4, n))
    a_i = a_h = theta = 0.0
    p = 1.0
    w = [0.0, 0.0, 0.0, 0.0]
    for i in range(n):
        a_i = min(a_i + bias_h[i] * dt[i], np.pi)
        a_h = min(a_h + bias_v[i] * dt[i], np.pi)
        theta += rate_v[i] * dt[i]
        a_i -= dt[i] / (ACCELEROMETER_TAU + dt[i]) * a_i
        if used[i]:
            k = gain[i]
            a_h -= k * a_h
            theta -= k * theta
            p -= k * p
            for j in range(4):
                w[j] += k * ((1.0 if accuracy[i] == j else 0.0) - w[j])
        incl_drift[i], head_drift[i], rotation[i], start[i] = a_i, a_h, theta, p
        weights[:, i] = w
    horizontal = np.sqrt(np.maximum(f["rate"] ** 2 - f["rate_vertical"] ** 2, 0))
    return {"incl_drift": incl_drift, "head_drift": head_drift, "rotation": rotation, "start": start,
            "weights": weights, "horizontal": horizontal, "vertical": np.abs(f["rate_vertical"]),
            "tilt": np.arctan(f["sustained"])}


def sigmas(b, c):
    """1-sigma inclination and heading, degrees, for constants c."""
    vi = ((c["inclination_floor"] * DEG) ** 2 + (c["inclination_timing"] * b["horizontal"]) ** 2
          + b["incl_drift"] ** 2 + b["tilt"] ** 2)
    floors = [c["magnetic_uncalibrated"], c["magnetic_low"], c["magnetic_medium"], c["magnetic_high"]]
    reference = np.pi ** 2 * b["start"] + sum((floors[j] * DEG) ** 2 * b["weights"][j] for j in range(4))
    vh = (reference + b["head_drift"] ** 2 + (c["gyroscope_scale"] * b["rotation"]) ** 2
          + (c["heading_timing"] * b["vertical"]) ** 2)
    return np.sqrt(vi) / DEG, np.sqrt(np.minimum(vh, np.pi ** 2)) / DEG


def scores(trial, c, after=0.0):
    """(within 2 sigma %, correlation, mean sigma, rms error) for inclination and heading, over the moving
    samples from `after` seconds on."""
    si, sh = sigmas(trial["parts"], c)
    m = trial["moving"] & (trial["t"] >= after)
    out = []
    for err, s in ((trial["inclination"], si), (trial["heading"], sh)):
        err, s = err[m], s[m]
        corr = np.corrcoef(s, err)[0, 1] if np.std(s) > 0 else float("nan")
        out.append((100 * np.mean(err <= 2 * s), corr, np.mean(s), np.sqrt(np.mean(err ** 2))))
    return out


def still_within(trial, c, which):
    """Within 2 sigma (%) over the still samples (movement 0)."""
    si, sh = sigmas(trial["parts"], c)
    error, sigma = (trial["inclination"], si) if which == 0 else (trial["heading"], sh)
    still = ~trial["moving"] & np.isfinite(error)
    return 100 * np.mean(error[still] <= 2 * sigma[still])


def objective(trials, c, which):
    total = 0.0
    for trial in trials:
        within, corr, mean, _ = scores(trial, c)[which]
        total += ((within - 95) / 5) ** 2 + 0.02 * mean - 2 * corr
    return total


def tied(c):
    """BROAD has `low` only briefly and never tells it from `medium`: both are tied to twice `high`."""
    c = dict(c)
    c["magnetic_low"] = c["magnetic_medium"] = 2 * c["magnetic_high"]
    return c


def fit(trials):
    """Two stages. The moving samples fix every constant; over them the calibrated floors fall to the search's
    bound, as the bias drift and the scale term carry the error. The still samples then fix the calibrated
    floor alone — at rest those terms have relaxed and the floor is what is left (with the moving fit's floor,
    07 at rest was 69 % within 2 sigma): the smallest, in steps from the bound, with every fitted trial's still
    samples at least 95 % within 2 sigma."""
    c = tied(START)
    for which, names in ((0, INCLINATION), (1, HEADING)):
        best = objective(trials, c, which)
        for _ in range(8):
            improved = False
            for name in names:
                for sign in (-1, 1):
                    for multiple in (4, 2, 1):
                        trial_c = dict(c)
                        trial_c[name] = max(LOWER.get(name, 0.0), c[name] + sign * multiple * STEP[name])
                        trial_c = tied(trial_c)
                        value = objective(trials, trial_c, which)
                        if value < best - 1e-12:
                            best, c, improved = value, trial_c, True
            if not improved:
                break
    for step in range(100):
        c = tied({**c, "magnetic_high": round(LOWER["magnetic_high"] * (1 + step), 6)})
        if all(still_within(trial, c, 1) >= 95 for trial in trials):
            break
    return c


def load(path, bench, dumps):
    name = os.path.basename(path)[:2]
    d = dumps or tempfile.mkdtemp()
    q_path, s_path, f_path = (os.path.join(d, f"{kind}{name}.csv") for kind in ("q", "s", "f"))
    if not (dumps and all(os.path.exists(p) for p in (q_path, s_path, f_path))):
        subprocess.run([bench, "broad", "--trial", path, "--output", q_path, "--sigma-output", s_path,
                        "--features-output", f_path], check=True, stdout=subprocess.DEVNULL)
    t = np.genfromtxt(path, delimiter=",", names=True)
    est = np.genfromtxt(q_path, delimiter=",", names=True)
    sig = np.genfromtxt(s_path, delimiter=",", names=True)
    features = np.genfromtxt(f_path, delimiter=",", names=True)
    if len(features) != len(t):
        raise SystemExit(f"{f_path} has {len(features)} rows for {len(t)} samples: every sample must give an output")
    ref = np.column_stack([t["opt_qw"], t["opt_qx"], t["opt_qy"], t["opt_qz"]])
    q = np.column_stack([est["qw"], est["qx"], est["qy"], est["qz"]])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    ref[:, 1:] *= -1
    e = qmul(q, ref)
    w, z = e[:, 0], e[:, 3]
    signed = np.degrees(2 * np.arctan(z / w))
    heading = np.abs(signed)
    inclination = np.degrees(2 * np.arccos(np.clip(np.sqrt(w ** 2 + z ** 2), 0, 1)))
    moving = t["movement"].astype(bool) & np.isfinite(heading) & np.isfinite(inclination)
    # The calibrated field through the optical reference: how far the magnetometer alone is off north.
    field = np.column_stack([features["mag_x"], features["mag_y"], features["mag_z"]])
    u, r0 = ref[:, 1:] * -1, ref[:, :1]
    turn = 2 * np.cross(u, field)
    field = field + r0 * turn + np.cross(u, turn)
    direction = np.degrees(np.arctan2(field[:, 0], field[:, 1]))
    return {"name": os.path.basename(path), "t": t["t_s"], "signed": signed, "direction": direction,
            "accuracy": features["accuracy"], "heading": heading, "inclination": inclination, "moving": moving,
            "parts": parts(features), "bench": (sig["sigma_inclination"], sig["sigma_heading"])}


def explain(trial, c):
    """Per 5 s: the filter's signed heading error (counter-clockwise) beside the magnetometer's own (its field's
    direction through the optical reference, clockwise from the median over calibrated samples: the heading
    error a filter following it would get), the calibration accuracy (0 uncalibrated … 3 high) and sigma."""
    _, sh = sigmas(trial["parts"], c)
    d = trial["direction"]
    calibrated = np.isfinite(d) & (trial["accuracy"] > 0)
    d = (d - np.median(d[calibrated if calibrated.any() else np.isfinite(d)]) + 180) % 360 - 180
    m, t = trial["moving"], trial["t"]
    print(f"{trial['name']}: per 5 s, moving share, accuracy, filter heading error, magnetometer's, sigma (°)")
    for start in np.arange(0, t[-1], 5):
        k = (t >= start) & (t < start + 5) & np.isfinite(trial["signed"]) & np.isfinite(d)
        if k.any():
            print(f"  {start:5.0f} s  {np.mean(m[k]):4.2f}  {np.mean(trial['accuracy'][k]):4.2f}  "
                  f"{np.mean(trial['signed'][k]):+6.2f}  {np.mean(d[k]):+6.2f}  {np.mean(sh[k]):5.2f}")
    rotation = trial["parts"]["rotation"][m]
    print(f"  signed rotation about the vertical not yet pulled back vs signed heading error: correlation "
          f"{np.corrcoef(rotation, trial['signed'][m])[0, 1]:+.2f}, slope "
          f"{100 * np.polyfit(np.degrees(rotation), trial['signed'][m], 1)[0]:+.2f} %")


def rest(trials, c):
    """The still samples (movement 0), which the tables do not score (the fit uses them only for the calibrated
    magnetic floor): within 2 sigma over all of them, and the mean |error| and sigma over the still start and end
    (first and last 30 s)."""
    print("still samples (not scored): heading within 2σ, |error| / σ first 30 s, last 30 s | inclination the same")
    for trial in trials:
        si, sh = sigmas(trial["parts"], c)
        t = trial["t"]
        row = trial["name"][:28].ljust(28)
        for which, error, sigma in ((1, trial["heading"], sh), (0, trial["inclination"], si)):
            still = ~trial["moving"] & np.isfinite(error)
            row += f"  {still_within(trial, c, which):5.1f} %"
            for k in (still & (t < 30), still & (t > t[-1] - 30)):
                row += f"  {np.mean(error[k]):5.2f}° / {np.mean(sigma[k]):5.2f}°"
            row += " |"
        print(row)


def table(trials, c, title, after=0.0):
    print(title + (f" (moving samples from {after:g} s on)" if after else ""))
    print("trial                        split  incl: within 2σ  corr  mean σ  rms err | heading: within 2σ  corr  mean σ  rms err")
    for index, trial in enumerate(trials):
        row = trial["name"][:28].ljust(28) + ("  fit " if index % 2 == 0 else "  held")
        for within, corr, mean, rms in scores(trial, c, after):
            row += f"   {within:6.1f} %  {corr:+.2f}  {mean:5.2f}°  {rms:5.2f}° |"
        print(row)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(ROOT, ".build", "release", "motion-bench"))
    ap.add_argument("--data", default=os.path.join(os.environ.get("MOTION_AGENT_DATA", "data"), "broad"))
    ap.add_argument("--dumps", help="keep (and reuse) the bench's q/s/f CSVs per trial in this directory")
    ap.add_argument("--fit", action="store_true", help="fit the constants on the even trials and print them")
    ap.add_argument("--compare", action="store_true", help="also print session 4's model on the same dumps")
    ap.add_argument("--explain", action="append", default=[], metavar="NN",
                    help="print trial NN (e.g. 02) per 5 s: filter's and magnetometer's heading errors, sigma")
    ap.add_argument("--rest", action="store_true", help="also print the still samples, which are not scored")
    ap.add_argument("--after", type=float, default=0.0, help="also print the tables from this time (s) on")
    args = ap.parse_args()
    if args.dumps:
        os.makedirs(args.dumps, exist_ok=True)
    trials = [load(p, args.bench, args.dumps) for p in sorted(glob.glob(os.path.join(args.data, "*.csv")))]
    worst = 0.0
    for trial in trials:
        si, sh = sigmas(trial["parts"], SHIPPED)
        worst = max(worst, np.max(np.abs(si - trial["bench"][0])), np.max(np.abs(sh - trial["bench"][1])))
    print(f"rebuilt model vs the bench's sigma (shipped constants): largest difference {worst:.1e}°")
    if worst > 1e-9:
        raise SystemExit("the rebuilt model differs from AttitudeUncertainty: update SHIPPED or parts() to match")
    table(trials, SHIPPED, "shipped constants (the bench's own sigma):")
    if args.after:
        table(trials, SHIPPED, "shipped constants", args.after)
    if args.compare:
        table(trials, SESSION4, "session 4's model (no scale term):")
        if args.after:
            table(trials, SESSION4, "session 4's model", args.after)
    if args.rest:
        rest(trials, SHIPPED)
        if args.compare:
            print("session 4's model:")
            rest(trials, SESSION4)
    for trial in trials:
        if trial["name"][:2] in args.explain:
            explain(trial, SHIPPED)
    if args.fit:
        fitted = fit(trials[0::2])
        print("fitted on " + ", ".join(t["name"][:2] for t in trials[0::2]) + ": "
              + ", ".join(f"{k} {v:.4g}" for k, v in fitted.items()))
        table(trials, fitted, "fitted constants:")


main()
