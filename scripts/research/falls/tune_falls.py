#!/usr/bin/env python3
"""How the fall detector's parameters were chosen, with subjects held out (BENCHMARKS.md, "Falls").

Data: SisFall (Sucerquia, López, Vargas-Bonilla, "SisFall: A Fall and Movement Dataset", Sensors 17(1):198, 2017),
the trials of 14 subjects, SUBJECT/CODE_SUBJECT_RNN.csv.gz under --data: one waist device (ADXL345 accelerometer,
ITG3200 gyroscope) at 200 Hz; D01–D19 activities of daily living, F01–F15 falls.

The detector (Sources/MotionEstimation/FallDetector.swift; its features are computed here by fall_model.py, the
same way): every candidate impact (a local maximum of |a| ≥ 1.6 g over ±0.5 s) that passes three gates —
orientation change ≥ the gate (the direction of gravity in the device 2–1 s before vs 1–2 s after), stillness
(standard deviation of |a| 1–2 s after) ≤ 0.3 g, both placement- and axis-free — is scored by a logistic model
on magnitude features:

    score = c0 + c1 ln(smoothed peak g) + c2 ln(max(energy g·s, 0.001)) + c3 ln(max(stillness g, 0.005))
            [+ with a gyroscope: c4 + c5 ln(largest |ω| rad/s + 0.1)]

and is a fall when score ≥ 0. The smoothed peak is the largest |a| after a first-order low-pass of time constant τ
over the second around the impact: unlike the raw peak it hardly grows with the sample rate. One parameter set
serves 50–200 Hz and both sensor sets: the model is fitted on the candidates of every rate (200 Hz, and decimated
to 100 and 50 Hz by taking every 2nd / 4th sample, as the agent's decimator does) with and without the gyroscope
at once, and its threshold (folded into c0) maximises min(sensitivity, specificity) + 0.01 (sensitivity +
specificity) over the training trials of all of them, placed halfway between the two training scores it separates.

The procedure, for each subject held out (leave-one-subject-out, LOSO):
  1. on the 13 other subjects, for each orientation gate in --gates (default: 30° only, fixed) and each time
     constant τ in --peak-taus (default 0, 0.05, 0.1, 0.2, 0.4, 0.8 s; 0 is the raw peak, the detector before
     2 Dec 2026): fit the logistic model (L2, class-balanced) on the gated candidates — per fall trial the one
     with the largest energy (the fall's impact) is a positive; every gated candidate of a daily-activity trial
     is a negative; the other candidates of fall trials (before or after the fall) are left out — then choose
     the threshold;
  2. keep the gate and τ whose training trials score best (the held-out subject plays no part in the choice);
  3. score the held-out subject's trials, at each rate, with and without the gyroscope.
A trial counts as a fall when any of its candidates scores ≥ 0 (per trial, as the issue's targets).
The shipped set is the same procedure run on all 14 subjects; --swift prints it as Swift.

Also printed: the shipped set on every trial (what `motion-bench falls` must reproduce through the Swift
detector), the latency from the impact to the decision, the statistics behind the simple events' defaults and
the resolution's activity threshold.

Usage: scripts/research/falls/run.sh [--data DIR] [--swift] [--trials] [--gates 30,35,…] [--peak-taus 0,0.1,…]
       [--oc-feature]
Needs numpy and scipy (run.sh installs them into .build/falls-venv).
"""
import argparse
import collections
import os
import sys

import numpy as np
from scipy.optimize import minimize

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fall_model as fm  # noqa: E402
import sisfall  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
STEPS = {200: 1, 100: 2, 50: 4}
GATES_DEG = (30,)
PEAK_TAUS_S = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)
STILL_GATE_G = 0.3
ENERGY_FLOOR = 1e-3
STILL_FLOOR = 0.005
RATE_OFFSET = 0.1
L2 = 0.01


def features(trials):
    """Candidate table per rate: dict rate -> dict of arrays (one entry per candidate, with its trial index)."""
    out = {}
    for rate, step in STEPS.items():
        cols = collections.defaultdict(list)
        for i, tr in enumerate(trials):
            t, a, g = fm.decimate(tr, step)
            f = fm.candidates(fm.blocks(t, a, g, PEAK_TAUS_S))
            for k, v in f.items():
                cols[k].append(v)
            cols["trial"].append(np.full(len(f["peak"]), i))
        out[rate] = {k: np.concatenate(v) for k, v in cols.items()}
    return out


OC_FEATURE = False


def design(C, gyro, tau):
    """The model's inputs: ln smoothed peak (time constant PEAK_TAUS_S[tau]), ln energy, ln stillness, then the
    gyroscope's indicator and ln rate (0 without)."""
    n = len(C["peak"])
    x = [np.log(C["speak"][:, tau]), np.log(np.maximum(C["energy"], ENERGY_FLOOR)), np.log(np.maximum(C["still"], STILL_FLOOR))]
    if OC_FEATURE:
        x.append(np.minimum(C["oc"], 90) / 90)

    ind = np.full(n, 1.0 if gyro else 0.0)
    x += [ind, ind * np.log(C["gmax"] + RATE_OFFSET)]

    return np.column_stack(x)


def gate(C, deg):
    return (C["valid"] > 0) & (C["oc"] >= deg) & (C["still"] <= STILL_GATE_G)


def fit(Z, y):
    """Class-balanced L2 logistic regression on standardised inputs; returns (coefficients on raw inputs, intercept)."""
    mu = Z.mean(0)
    sd = Z.std(0)
    sd[sd == 0] = 1
    A = np.column_stack([(Z - mu) / sd, np.ones(len(Z))])
    wpos = (len(y) - y.sum()) / max(y.sum(), 1)
    sw = np.where(y, wpos, 1.0)

    def loss(w):
        z = A @ w
        p = 1 / (1 + np.exp(-z))
        l = -(sw * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).sum() / sw.sum() + L2 * (w[:-1] ** 2).sum()
        g = A.T @ (sw * (p - y)) / sw.sum()
        g[:-1] += 2 * L2 * w[:-1]
        return l, g

    w = minimize(loss, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B").x
    coef = w[:-1] / sd
    return coef, w[-1] - (w[:-1] * mu / sd).sum()


def trial_scores(C, gyro, model, ntrials):
    coef, b, deg, tau = model
    s = design(C, gyro, tau) @ coef + b
    s[~gate(C, deg)] = -np.inf
    out = np.full(ntrials, -np.inf)
    np.maximum.at(out, C["trial"].astype(int), s)
    return out


def criterion(det, fall):
    se = det[fall].mean()
    sp = 1 - det[~fall].mean()
    return min(se, sp) + 0.01 * (se + sp), se, sp


def procedure(F, train, fall):
    """Steps 1–2 on the trials where train is True: returns (coef, intercept with the threshold folded in, gate,
    index of τ in PEAK_TAUS_S)."""
    best = None
    for deg, tau in [(d, i) for d in GATES_DEG for i in range(len(PEAK_TAUS_S))]:
        Zs, ys = [], []
        for rate, C in F.items():
            tri = C["trial"].astype(int)
            g = gate(C, deg) & train[tri]
            pos = np.zeros(len(tri), bool)
            for i in np.unique(tri[g & fall[tri]]):
                s = np.nonzero(g & (tri == i))[0]
                pos[s[np.argmax(C["energy"][s])]] = True
            use = (g & ~fall[tri]) | pos
            for gyro in (False, True):
                Zs.append(design(C, gyro, tau)[use])
                ys.append(pos[use])
        coef, b = fit(np.concatenate(Zs), np.concatenate(ys))
        scores = np.concatenate([trial_scores(C, gyro, (coef, b, deg, tau), len(fall))[train]
                                 for C in F.values() for gyro in (False, True)])
        f = np.concatenate([fall[train]] * (2 * len(F)))
        cands = np.unique(scores[np.isfinite(scores)])
        value, i = max((criterion(scores >= th, f)[0], i) for i, th in enumerate(cands))
        # the threshold halfway to the next lower training score: no training trial sits on the boundary, where
        # rounding (Swift against numpy) would decide it
        th = cands[i] if i == 0 else 0.5 * (cands[i] + cands[i - 1])
        if best is None or value > best[0]:
            best = (value, coef, b - th, deg, tau)
    return best[1], best[2], best[3], best[4]


def report(name, det, fall, names):
    se = det[fall].mean()
    sp = 1 - det[~fall].mean()
    missed = collections.Counter(names[i][:3] for i in range(len(names)) if fall[i] and not det[i])
    false = collections.Counter(names[i][:3] for i in range(len(names)) if not fall[i] and det[i])
    print(f"{name:<26} sensitivity {100 * se:6.2f} % ({det[fall].sum()}/{fall.sum()})  "
          f"specificity {100 * sp:6.2f} % ({(~det[~fall]).sum()}/{(~fall).sum()})")
    print(f"{'':<26} missed falls: {dict(sorted(missed.items())) or '-'}; ADL called falls: {dict(sorted(false.items())) or '-'}")
    return se, sp


def simple_event_statistics(trials):
    """Share of trials per code with an impact ≥ 3 g, and with |a| < 0.4 g for ≥ 0.15 s (the simple events' defaults)."""
    rows = collections.defaultdict(lambda: [0, 0, 0, 0.0])
    for tr in trials:
        m = np.linalg.norm(tr.acc, axis=1)
        below = m < 0.4
        longest = 0
        run = 0
        for v in below:
            run = run + 1 if v else 0
            longest = max(longest, run)
        r = rows[tr.code]
        r[0] += 1
        r[1] += m.max() >= 3.0
        r[2] += longest / 200 >= 0.15
        r[3] = max(r[3], longest / 200)
    print("\nSimple events at their defaults (impact ≥ 3 g; free fall |a| < 0.4 g for ≥ 0.15 s), trials with one, per code:")
    for code in sorted(rows):
        n, imp, ff, longest = rows[code]
        print(f"  {code}: {n:3d} trials, impact {imp:3d}, free fall {ff:3d} (longest below 0.4 g: {longest:.3f} s)")


def activity_statistics(trials):
    """The resolution's activity, as FallDetector measures it: a 0.1 s block is active when its mean ||a| − b| > 0.05 g
    (b follows |a|: b ← b + dt/(1 s + dt) (|a| − b), the deviation against b before the sample) or its mean |ω| >
    0.5 rad/s. Printed: the active seconds after each fall trial's decision (its largest |a| + 2 s) to the trial's end,
    and the active share of the walking and stair trials."""
    from scipy.signal import lfilter
    alpha = 0.005 / 1.005
    after, observed, shares = [], [], collections.defaultdict(list)
    for tr in trials:
        m = np.linalg.norm(tr.acc, axis=1)
        b, _ = lfilter([alpha], [1, -(1 - alpha)], m[1:], zi=[(1 - alpha) * m[0]])
        dev = np.abs(m - np.r_[m[0], m[0], b[:-1]])
        w = np.linalg.norm(tr.gyr, axis=1)
        nb = len(m) // 20
        active = (dev[: nb * 20].reshape(nb, 20).mean(1) > 0.05) | (w[: nb * 20].reshape(nb, 20).mean(1) > 0.5)
        if tr.is_fall:
            first = (int(np.argmax(m)) + 400) // 20 + 1
            if first < nb:
                after.append(active[first:].sum() * 0.1)
                observed.append((nb - first) * 0.1)
        elif tr.code in ("D01", "D02", "D05", "D06"):
            shares[tr.code].append(active.mean())
    after = np.array(after)
    print(f"\nResolution activity (blocks active: mean ||a| − baseline| > 0.05 g or mean |ω| > 0.5 rad/s):")
    print(f"  after {len(after)} falls' decisions, to the trial's end (median {np.median(observed):.1f} s, "
          f"{min(observed):.1f}–{max(observed):.1f} s): active s median {np.median(after):.1f}, 99th percentile "
          f"{np.percentile(after, 99):.2f}, largest {after.max():.1f}; ≥ 3 s in {(after >= 3).sum()}")
    for code, v in sorted(shares.items()):
        print(f"  {code}: active share median {np.median(v):.2f}, lowest {min(v):.2f} ({len(v)} trials)")


def main():
    global GATES_DEG, PEAK_TAUS_S, OC_FEATURE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("MOTION_AGENT_DATA") and
                    os.path.join(os.environ["MOTION_AGENT_DATA"], "falls", "sisfall"),
                    help="the SisFall folder (SUBJECT/CODE_SUBJECT_RNN.csv.gz); default $MOTION_AGENT_DATA/falls/sisfall")
    ap.add_argument("--cache", default=os.path.join(ROOT, ".build", "falls-cache"))
    ap.add_argument("--swift", action="store_true", help="print the shipped set as Swift")
    ap.add_argument("--trials", action="store_true", help="print every trial the shipped set gets wrong")
    ap.add_argument("--gates", default=",".join(map(str, GATES_DEG)),
                    help="orientation gates the procedure chooses from, degrees (comma-separated)")
    ap.add_argument("--peak-taus", default=",".join(map(str, PEAK_TAUS_S)),
                    help="time constants of the smoothed peak the procedure chooses from, s (comma-separated; 0: raw)")
    ap.add_argument("--oc-feature", action="store_true", help="(variant) the orientation change as a model input too")
    args = ap.parse_args()
    GATES_DEG = tuple(float(g) for g in args.gates.split(","))
    PEAK_TAUS_S = tuple(float(x) for x in args.peak_taus.split(","))
    OC_FEATURE = args.oc_feature
    if not args.data:
        sys.exit("no data: pass --data or set MOTION_AGENT_DATA to the folder holding falls/sisfall")
    trials = sisfall.load(args.data, args.cache)
    names = [t.name for t in trials]
    fall = np.array([t.is_fall for t in trials])
    subject = np.array([t.subject for t in trials])
    print(f"SisFall: {len(trials)} trials, {fall.sum()} falls, {(~fall).sum()} activities of daily living, "
          f"{len(set(subject))} subjects")
    F = features(trials)

    print("\nLeave one subject out (procedure on 13 subjects, scored on the 14th):")
    held = {(rate, gyro): np.zeros(len(trials), bool) for rate in F for gyro in (False, True)}
    for s in sorted(set(subject)):
        train = subject != s
        coef, b, deg, tau = procedure(F, train, fall)
        line = []
        for rate, C in F.items():
            for gyro in (False, True):
                det = trial_scores(C, gyro, (coef, b, deg, tau), len(trials)) >= 0
                held[(rate, gyro)][~train] = det[~train]
                miss = (fall & ~det & ~train).sum()
                fa = (~fall & det & ~train).sum()
                line.append(f"{rate}{'g' if gyro else 'a'}:{miss}/{fa}")
        print(f"  {s}: gate {deg}°, τ {PEAK_TAUS_S[tau]} s, coefficients {np.round(np.r_[b, coef], 3).tolist()}; missed/false per rate "
              f"(a accelerometer, g with gyroscope): {' '.join(line)}")
    print("\nHeld out, all 14 folds together:")
    for rate in F:
        for gyro in (False, True):
            report(f"{rate} Hz, {'with gyroscope' if gyro else 'accelerometer only'}", held[(rate, gyro)], fall, names)

    coef, b, deg, tau = procedure(F, np.ones(len(trials), bool), fall)
    print(f"\nShipped set (the procedure on all 14 subjects): gate {deg}°, τ {PEAK_TAUS_S[tau]} s, intercept {b:.6f}, "
          f"coefficients {coef.tolist()}")
    print("The shipped set on every trial (training data: not a held-out figure; motion-bench falls reproduces it):")
    for rate, C in F.items():
        for gyro in (False, True):
            model = (coef, b, deg, tau)
            ts = trial_scores(C, gyro, model, len(trials))
            det = ts >= 0
            report(f"{rate} Hz, {'with gyroscope' if gyro else 'accelerometer only'}", det, fall, names)
            s = design(C, gyro, tau) @ coef + b
            ok = gate(C, deg) & (s >= 0) & fall[C["trial"].astype(int)]
            # the first passing candidate per fall trial: its decision time minus its impact time
            first = {}
            for j in np.nonzero(ok)[0]:
                first.setdefault(int(C["trial"][j]), j)
            lat = np.array([C["decided"][j] - C["time"][j] for j in first.values()])
            print(f"{'':<26} latency impact → event: median {np.median(lat):.3f} s, max {lat.max():.3f} s")
            if args.trials:
                for i in np.nonzero(det != fall)[0]:
                    print(f"{'':<28}{names[i]} {'missed' if fall[i] else 'false fall'} (best score {ts[i]:.3f})")
    if args.swift:
        print("\nSwift (FallDetector.Settings.defaults):")
        print(f"            minimumOrientationChangeDegrees: {deg},")
        print(f"            peakTimeConstantSeconds: {PEAK_TAUS_S[tau]},")
        print("            score: FallScore(")
        print(f"                intercept: {float(b)!r},")
        print(f"                logSmoothedPeak: {float(coef[0])!r},")
        print(f"                logEnergy: {float(coef[1])!r},")
        print(f"                logStillness: {float(coef[2])!r},")
        print(f"                gyroscopeIntercept: {float(coef[3])!r},")
        print(f"                logRotationRate: {float(coef[4])!r}")
        print("            ),")
    simple_event_statistics(trials)
    activity_statistics(trials)


if __name__ == "__main__":
    main()
