#!/usr/bin/env python3
"""Train MotionAgent's activity classifier and export it as tables the agent and the bench read.

Two gradient-boosted tree ensembles (scikit-learn HistGradientBoostingClassifier), as in
Sources/MotionEstimation/ActivityModel.swift:

- motion: stationary / walking / running / cycling / none, from the orientation-free features of a 5 s window on
  the agent's 25 Hz grid (ActivityFeatures). Trained on DSADS (UCI "Daily and Sports Activities", Altun, Barshan &
  Tuncel 2010, CC BY 4.0): 8 subjects x 15 activities x 5 min, torso, right-arm and right-leg units, all three
  units pooled (the agent does not know where it is worn). Classes: stationary a01 a02 a03 a07; walking a05 a06
  a09 a10 a11; running a12; cycling a15 a16; none a08 a18 a19. Each class weighs the same in training.
- vehicle: automotive or not, from TMD's eight magnitude statistics and four derived inputs
  (ActivityModel.WindowStatistics). Automotive examples: TMD's Car, Bus and Train windows; the others: TMD's Still
  and Walking windows and the DSADS windows (the same statistics, on the agent's 25 Hz grid: TMD's app sampled at
  most at 20 Hz). TMD rows with
  row % 5 == 0 are never trained on, so the bench scores the shipped model on them.

The features are not recomputed here: they are the agent's own, dumped by its front end
(ActivityFeatureExtractor) through

    motion-bench activity --data DATA/activity --features-output FEATURES.csv

so training and the agent read the same numbers. With --bench PATH this script runs that itself.

Validation: leave-one-subject-out. For each DSADS subject a motion and a vehicle model are trained without that
subject; the window-level figures are printed here, and the eight fold models are exported for
`motion-bench activity`, which runs them through the whole estimator (smoothing, confidence, gait) on the held-out
subject and prints the figures BENCHMARKS.md records.

Outputs: Sources/MotionEstimation/ActivityModel+Tables.swift (the shipped model: every subject) and
Sources/MotionBench/ActivityFoldModels.swift (the eight held-out-subject models).

Usage: python3 scripts/research/activity/train_activity.py --data DATA/activity [--features FEATURES.csv | --bench .build/release/motion-bench]
Needs numpy and scikit-learn.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
MOTION_CLASSES = ["stationary", "walking", "running", "cycling", "none"]
ACTIVITY_CLASS = {1: 0, 2: 0, 3: 0, 7: 0, 5: 1, 6: 1, 9: 1, 10: 1, 11: 1, 12: 2, 15: 3, 16: 3, 8: 4, 18: 4, 19: 4}
TMD_LABEL = {"Still": 0, "Walking": 0, "Car": 1, "Bus": 1, "Train": 1}
TMD_COLUMNS = [f"android.sensor.{s}#{k}" for s in ("accelerometer", "gyroscope") for k in ("mean", "min", "max", "std")]
UNITS = ["torso", "arm", "leg"]
# Kept small: the shipped tables are a few thousand nodes, and the bench carries eight more of each.
MOTION_MODEL = dict(max_iter=60, max_leaf_nodes=8, learning_rate=0.15, l2_regularization=1.0, random_state=0)
DSADS_WEIGHT = 4.0
VEHICLE_MODEL = dict(max_iter=60, max_leaf_nodes=8, learning_rate=0.15, l2_regularization=1.0, random_state=0)


def vehicle_inputs(stats):
    """The vehicle model's 12 inputs from the 8 statistics; WindowStatistics.input(_:) in Swift computes the same."""
    x = np.asarray(stats, dtype=float)
    return np.column_stack([
        x,
        x[:, 2] - x[:, 1],
        x[:, 6] - x[:, 5],
        x[:, 3] / np.maximum(x[:, 0], 1e-6),
        x[:, 7] / np.maximum(x[:, 4], 1e-6),
    ])


def load_features(path):
    with open(path) as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [r for r in reader]
    names = [h for h in header[5:] if not h.startswith("raw.")]
    data = np.array([[float(v) for v in r[5:5 + len(names)]] for r in rows])
    meta = dict(
        subject=np.array([int(r[0]) for r in rows]),
        activity=np.array([int(r[1]) for r in rows]),
        unit=np.array([UNITS.index(r[2]) for r in rows]),
        rate=np.array([int(r[3]) for r in rows]),
        t=np.array([float(r[4]) for r in rows]),
    )
    # TMD's eight statistics are the first eight features (ActivityFeatures.statistics).
    return names, data, data[:, :8], meta


def load_tmd(path):
    X, y = [], []
    with open(path) as f:
        for r in csv.DictReader(f):
            X.append([float(r[c]) for c in TMD_COLUMNS])
            y.append(TMD_LABEL[r["target"]])
    return np.array(X), np.array(y)


def balanced_weights(y, k):
    counts = np.bincount(y, minlength=k).astype(float)
    return (len(y) / (k * np.maximum(counts, 1)))[y]


def fit_motion(X, y):
    return HistGradientBoostingClassifier(**MOTION_MODEL).fit(X, y, sample_weight=balanced_weights(y, 5))


def fit_vehicle(tmd_X, tmd_y, dsads_stats):
    """TMD's training rows (weight 1 each) and the DSADS windows, which together weigh DSADS_WEIGHT times TMD's
    non-vehicle rows: without them a still person in a lift or on an exercise bike looks like a car at a red light
    to TMD's statistics (a07, standing in an elevator, was called automotive 44 % of the time at 1x, 8 % at 4x,
    3 % at 16x, while TMD's automotive recall fell from 92 % to 88 % and 82 %)."""
    X = np.vstack([vehicle_inputs(tmd_X), vehicle_inputs(dsads_stats)])
    y = np.concatenate([tmd_y, np.zeros(len(dsads_stats), dtype=int)])
    share = DSADS_WEIGHT * np.sum(tmd_y == 0) / max(len(dsads_stats), 1)
    w = np.concatenate([np.ones(len(tmd_y)), np.full(len(dsads_stats), share)])
    return HistGradientBoostingClassifier(**VEHICLE_MODEL).fit(X, y, sample_weight=w)


def table(clf, n_inputs):
    """The ensemble as the text table ActivityTrees(table:) reads."""
    classes = 1 if len(clf.classes_) == 2 else len(clf.classes_)
    lines = [f"ensemble {classes} {n_inputs}",
             "baseline " + " ".join(repr(float(v)) for v in np.ravel(clf._baseline_prediction))]
    for iteration in clf._predictors:
        for predictor in iteration:
            lines.append("t")
            for node in predictor.nodes:
                # 12 significant digits for thresholds (a feature that close to one is as likely either
                # side), 9 for leaf scores (the probabilities move by less than 1e-8): half the size of repr.
                if node["is_leaf"]:
                    lines.append(f"l {float(node['value']):.9g}")
                else:
                    lines.append(f"s {int(node['feature_idx'])} {float(node['num_threshold']):.12g} "
                                 f"{int(node['left'])} {int(node['right'])}")
    return "\n".join(lines)


def swift_string(name, text, indent="    "):
    """A Swift multi-line string literal whose closing delimiter sits in column 0, so its lines need no indent."""
    return f'{indent}static let {name} = """\n{text}\n"""\n'


def combined(motion_p, vehicle_p):
    """Probabilities over stationary, walking, running, cycling, automotive, none (as ActivityModel.probabilities)."""
    rest = (1 - vehicle_p)[:, None]
    return np.column_stack([rest * motion_p[:, :4], vehicle_p, rest * motion_p[:, 4:5]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.environ.get("MOTION_AGENT_DATA", "data"), "activity"),
                    help="the folder with tmd_dataset_5secondWindow.csv and dsads/")
    ap.add_argument("--features", help="motion-bench activity --features-output FILE (else --bench makes it)")
    ap.add_argument("--bench", default=os.path.join(ROOT, ".build", "release", "motion-bench"))
    ap.add_argument("--no-export", action="store_true", help="print the figures only")
    ap.add_argument("--stride", type=int, default=1,
                    help="train on every n-th window of a recording (they overlap by 4 s); the shipped tables use 1")
    args = ap.parse_args()

    features = args.features
    if features is None:
        features = os.path.join(tempfile.mkdtemp(), "features.csv")
        print(f"dumping the agent's features with {args.bench}", flush=True)
        subprocess.run([args.bench, "activity", "--data", args.data, "--features-output", features], check=True)
    names, F, raw, meta = load_features(features)
    at25 = meta["rate"] == 25
    F, raw = F[at25], raw[at25]
    meta = {k: v[at25] for k, v in meta.items()}
    y = np.array([ACTIVITY_CLASS[a] for a in meta["activity"]])
    subjects = meta["subject"]
    tmd_X, tmd_y = load_tmd(os.path.join(args.data, "tmd_dataset_5secondWindow.csv"))
    tmd_train = np.arange(len(tmd_y)) % 5 != 0
    print(f"{len(y)} DSADS windows ({len(names)} features), {len(tmd_y)} TMD windows ({tmd_train.sum()} trained on)")

    # Windows are 5 s long, one a second: neighbours overlap by 4 s.
    kept = np.round(meta["t"]).astype(int) % args.stride == 0
    folds = {}
    P = np.zeros((len(y), 6))
    for s in sorted(set(subjects)):
        train, test = (subjects != s) & kept, subjects == s
        motion = fit_motion(F[train], y[train])
        vehicle = fit_vehicle(tmd_X[tmd_train], tmd_y[tmd_train], raw[train])
        P[test] = combined(motion.predict_proba(F[test]), vehicle.predict_proba(vehicle_inputs(raw[test]))[:, 1])
        folds[s] = (motion, vehicle)
        print(f"  subject {s} held out: trained", flush=True)

    # Window-level figures (no smoothing, no gait; the bench adds both). As ActivityModel.Probabilities.best:
    # automotive when the vehicle model says at least half, else the most probable of the other four.
    best = np.where(P[:, 4] >= 0.5, 4, P[:, :4].argmax(1))
    print("window level, each subject held out: recall of stationary / walking / running / cycling, per unit")
    for u, unit in enumerate(UNITS):
        rec = [np.mean(best[(meta["unit"] == u) & (y == k)] == k) * 100 for k in range(4)]
        print(f"  {unit:6s} " + " ".join(f"{r:5.1f}" for r in rec))
    for a in (8, 18, 19):
        m = meta["activity"] == a
        rc = np.isin(best[m], (2, 3))
        print(f"  a{a:02d} called running or cycling {np.mean(rc) * 100:.1f} % of windows")
    print(f"  called automotive: {np.mean(best == 4) * 100:.2f} % of DSADS windows")
    motion_best = P[:, [0, 1, 2, 3]].argmax(1)
    print("  the motion model alone (automotive left out): " + " | ".join(
        UNITS[u] + " " + " ".join(f"{np.mean(motion_best[(meta['unit'] == u) & (y == k)] == k) * 100:.1f}" for k in range(4))
        for u in range(3)))

    motion = fit_motion(F[kept], y[kept])
    vehicle = fit_vehicle(tmd_X[tmd_train], tmd_y[tmd_train], raw[kept])
    held = ~tmd_train
    pv = vehicle.predict_proba(vehicle_inputs(tmd_X[held]))[:, 1]
    print(f"shipped vehicle model on TMD's held-out rows: {np.mean((pv > 0.5) == tmd_y[held]) * 100:.2f} % right "
          f"(automotive recall {np.mean(pv[tmd_y[held] == 1] > 0.5) * 100:.1f} %, "
          f"still/walking called automotive {np.mean(pv[tmd_y[held] == 0] > 0.5) * 100:.1f} %)")
    if args.no_export:
        return
    n_motion, n_vehicle = len(names), 12
    # The literals' lines sit in column 0 (half the bytes of indented ones), which swift-format's indentation rule
    # refuses: the generated files are left out of the lint, as the protobuf one is.
    head = ("// Generated by scripts/research/activity/train_activity.py — do not edit by hand; re-run the script.\n"
            "// swift-format-ignore-file\n")
    shipped = (head + f"// Trained on every DSADS subject (CC BY 4.0) and TMD's rows with row % 5 != 0 (CC0): {MOTION_MODEL}.\n"
               "// Tables read by ActivityTrees(table:).\n\nextension ActivityModel {\n"
               + swift_string("motionTable", table(motion, n_motion)) + "\n"
               + swift_string("vehicleTable", table(vehicle, n_vehicle)) + "}\n")
    out = os.path.join(ROOT, "Sources", "MotionEstimation", "ActivityModel+Tables.swift")
    with open(out, "w") as f:
        f.write(shipped)
    parts = [head, "// The models of leave-one-subject-out validation: fold s is trained without DSADS subject s.\n\n",
             "enum ActivityFoldModels {\n",
             "    /// (subject held out, motion table, vehicle table)\n",
             "    static let tables: [(subject: Int, motion: String, vehicle: String)] = [\n"]
    for s, (m, v) in sorted(folds.items()):
        parts.append(f"        ({s}, motion{s}, vehicle{s}),\n")
    parts.append("    ]\n\n")
    for s, (m, v) in sorted(folds.items()):
        parts.append(swift_string(f"motion{s}", table(m, n_motion)))
        parts.append(swift_string(f"vehicle{s}", table(v, n_vehicle)))
    parts.append("}\n")
    out_folds = os.path.join(ROOT, "Sources", "MotionBench", "ActivityFoldModels.swift")
    with open(out_folds, "w") as f:
        f.write("".join(parts))
    nodes = sum(len(p.nodes) for it in motion._predictors for p in it)
    vnodes = sum(len(p.nodes) for it in vehicle._predictors for p in it)
    print(f"wrote {os.path.relpath(out, ROOT)} (motion {nodes} nodes, vehicle {vnodes} nodes) and "
          f"{os.path.relpath(out_folds, ROOT)}")
    # Reference probabilities for the Swift test that the tables are read faithfully: the first windows of
    # a16 subject 1, leg unit (Tests/Fixtures/data/activity/dsads holds its first seconds).
    probe = np.flatnonzero((meta["activity"] == 16) & (subjects == 1) & (meta["unit"] == 2))[:3]
    print("probe (a16, subject 1, leg; t, motion probabilities, vehicle probability):")
    for i in probe:
        pm = motion.predict_proba(F[i:i + 1])[0]
        pv = vehicle.predict_proba(vehicle_inputs(raw[i:i + 1]))[0, 1]
        print(f"  {meta['t'][i]:.3f} " + " ".join(f"{v:.9f}" for v in pm) + f" {pv:.9f}")


if __name__ == "__main__":
    sys.exit(main())
