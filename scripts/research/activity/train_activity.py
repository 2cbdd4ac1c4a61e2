#!/usr/bin/env python3
"""Train MotionAgent's activity classifier and export it as Swift constants.

Data
- Still / Walking / Car / Bus / Train: the TMD 5 s windows ($MOTION_AGENT_DATA/activity/tmd_dataset_5secondWindow.csv;
  repository deveshsangwan/Transportation-Mode-Detection, CC0, from the University of Bologna transportation-mode
  data set). Car, Bus and Train are merged into "automotive". Features: mean/min/max/std of the accelerometer
  magnitude (m/s^2) and of the gyroscope magnitude (rad/s) per 5 s window, exactly the columns of that file.
- Running and cycling: SIMULATED here (no public labelled raw set was available). Each window is a 5 s, 50 Hz
  synthetic magnitude signal built from physical ranges (below), reduced to the same 8 statistics. The TMD
  accuracy figures never include these windows.

Evaluation (printed): 5 folds by row index (fold = row % 5; the file's rows are in shuffled order, so each fold
holds every class in about equal share). The file has no user or recording ids, so windows of one recording fall
in both training and test folds: the figures are optimistic for a new user.

Shipped model: trained on folds 1-4 (rows with row % 5 != 0) plus the simulated windows; fold 0 stays held out so
`motion-bench activity` and the Swift test can score the shipped constants on windows it never saw.

Usage: python3 scripts/research/activity/train_activity.py [--data PATH] [--out Sources/MotionEstimation/ActivityModel+Trees.swift]
Needs numpy and scikit-learn (pip install numpy scikit-learn).
"""
import argparse
import csv
import os
import sys

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
CLASSES = ["stationary", "walking", "running", "cycling", "automotive"]
LABEL = {"Still": 0, "Walking": 1, "Car": 4, "Bus": 4, "Train": 4}
COLUMNS = [f"android.sensor.{s}#{k}" for s in ("accelerometer", "gyroscope") for k in ("mean", "min", "max", "std")]
G = 9.80665
# Kept small so the exported Swift stays a few thousand nodes.
MODEL = dict(max_iter=60, max_leaf_nodes=8, learning_rate=0.15, l2_regularization=1.0, random_state=0)


def features(x):
    """The model's inputs from the 8 statistics; ActivityModel.features(_:) in Swift computes the same."""
    x = np.asarray(x, dtype=float)
    acc_range = x[:, 2] - x[:, 1]
    gyr_range = x[:, 6] - x[:, 5]
    acc_cv = x[:, 3] / np.maximum(x[:, 0], 1e-6)
    gyr_cv = x[:, 7] / np.maximum(x[:, 4], 1e-6)
    return np.column_stack([x, acc_range, gyr_range, acc_cv, gyr_cv])


def load_tmd(path):
    X, y = [], []
    with open(path) as f:
        for r in csv.DictReader(f):
            X.append([float(r[c]) for c in COLUMNS])
            y.append(LABEL[r["target"]])
    return np.array(X), np.array(y)


def stats(acc, gyr):
    return [acc.mean(), acc.min(), acc.max(), acc.std(), gyr.mean(), gyr.min(), gyr.max(), gyr.std()]


def simulate(n, rng):
    """SIMULATED running and cycling windows (5 s at 50 Hz), phone in a trouser pocket or hand.

    Running: cadence 2.5-3.3 steps/s; each foot strike an impact pulse of 1.5-3.5 g above gravity lasting
    60-120 ms, a flight phase near 0.2-0.6 g; thigh/arm rotation 2-6 rad/s peak at the stride frequency.
    Cycling: pedal cadence 0.9-1.6 rev/s; thigh rotation +-0.3-0.7 rad about the hip, so 1.5-6 rad/s peak;
    magnitude g plus a 0.5-2 m/s^2 pedalling component and 0.2-1.2 m/s^2 road vibration.
    Sensor noise 0.05 m/s^2 and 0.01 rad/s. Ranges from gait and cycling biomechanics textbooks (e.g. Novacheck
    1998 for running; pedal cadence 60-100 rpm), not from recordings.
    """
    t = np.arange(0, 5, 0.02)
    X, y = [], []
    for _ in range(n):
        cad = rng.uniform(2.5, 3.3)
        phase = (t * cad + rng.uniform()) % 1.0
        width = rng.uniform(0.06, 0.12) * cad
        impact = rng.uniform(1.5, 3.5) * G * np.exp(-0.5 * ((phase - 0.1) / (width / 2.5)) ** 2)
        flight = rng.uniform(0.2, 0.6) * G
        base = np.where(phase > 0.35, flight, G * rng.uniform(0.9, 1.2))
        acc = np.abs(base + impact + rng.normal(0, 0.05 + rng.uniform(0, 1.0), t.size))
        w = rng.uniform(2, 6)
        gyr = np.abs(w * np.sin(np.pi * cad * t + rng.uniform(0, 6.3))) + np.abs(rng.normal(0, 0.01 + 0.2 * rng.uniform(), t.size))
        X.append(stats(acc, gyr))
        y.append(2)
    for _ in range(n):
        f = rng.uniform(0.9, 1.6)
        ph = rng.uniform(0, 6.3)
        acc = np.abs(G + rng.uniform(0.5, 2.0) * np.sin(2 * np.pi * 2 * f * t + ph) + rng.normal(0, rng.uniform(0.2, 1.2), t.size))
        amp = rng.uniform(0.3, 0.7)
        gyr = np.abs(amp * 2 * np.pi * f * np.cos(2 * np.pi * f * t + ph)) + np.abs(rng.normal(0, 0.05 + 0.2 * rng.uniform(), t.size))
        X.append(stats(acc, gyr))
        y.append(3)
    return np.array(X), np.array(y)


def confusion(truth, pred, k=5):
    m = np.zeros((k, k), dtype=int)
    for a, b in zip(truth, pred):
        m[a, b] += 1
    return m


def export(clf, path, n_features):
    feature, threshold, left, right, value, missing_left, roots = [], [], [], [], [], [], []
    for iteration in clf._predictors:
        for predictor in iteration:
            offset = len(feature)
            roots.append(offset)
            for node in predictor.nodes:
                leaf = bool(node["is_leaf"])
                feature.append(-1 if leaf else int(node["feature_idx"]))
                threshold.append(0.0 if leaf else float(node["num_threshold"]))
                left.append(0 if leaf else offset + int(node["left"]))
                right.append(0 if leaf else offset + int(node["right"]))
                value.append(float(node["value"]) if leaf else 0.0)
                missing_left.append(bool(node["missing_go_to_left"]))
    base = [float(v) for v in np.ravel(clf._baseline_prediction)]

    def doubles(xs):
        return ",\n".join("        " + ", ".join(repr(float(v)) for v in xs[i:i + 6]) for i in range(0, len(xs), 6))

    def ints(xs):
        return ",\n".join("        " + ", ".join(str(int(v)) for v in xs[i:i + 16]) for i in range(0, len(xs), 16))

    src = f"""// Generated by scripts/research/activity/train_activity.py — do not edit by hand; re-run the script.
// Gradient-boosted trees (scikit-learn HistGradientBoostingClassifier, {MODEL}), trained on TMD rows with
// row % 5 != 0 (CC0; University of Bologna transportation-mode data) plus SIMULATED running/cycling windows.

extension ActivityModel {{
    /// Classes in output order.
    static let classCount = {len(CLASSES)}
    /// Inputs per window (see `features(_:)`).
    static let featureCount = {n_features}
    /// Raw score of each class before the trees.
    static let baseline: [Double] = [{", ".join(repr(v) for v in base)}]
    /// Index of each tree's root node; tree `i` adds to class `i % classCount`.
    static let roots: [Int32] = [
{ints(roots)}
    ]
    /// Split feature of each node; −1 marks a leaf.
    static let nodeFeature: [Int8] = [
{ints(feature)}
    ]
    /// Split threshold of each node: go left when the feature is ≤ it.
    static let nodeThreshold: [Double] = [
{doubles(threshold)}
    ]
    static let nodeLeft: [Int32] = [
{ints(left)}
    ]
    static let nodeRight: [Int32] = [
{ints(right)}
    ]
    /// Leaf values (raw score added to the tree's class).
    static let nodeValue: [Double] = [
{doubles(value)}
    ]
}}
"""
    with open(path, "w") as f:
        f.write(src)
    return len(feature), len(roots)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.environ.get("MOTION_AGENT_DATA", "data"), "activity", "tmd_dataset_5secondWindow.csv"))
    ap.add_argument("--out", default=os.path.join(ROOT, "Sources", "MotionEstimation", "ActivityModel+Trees.swift"))
    ap.add_argument("--simulated", type=int, default=1200, help="simulated windows per class (running, cycling)")
    args = ap.parse_args()

    X, y = load_tmd(args.data)
    rows = np.arange(len(y))
    rng = np.random.default_rng(0)
    Xs, ys = simulate(args.simulated, rng)
    sim_fold = np.arange(len(ys)) % 5

    print("5-fold (fold = row % 5) accuracy on TMD stationary / walking / automotive:")
    accs, total = [], np.zeros((5, 5), dtype=int)
    for k in range(5):
        tr, te = rows % 5 != k, rows % 5 == k
        clf = HistGradientBoostingClassifier(**MODEL)
        clf.fit(features(np.vstack([X[tr], Xs[sim_fold != k]])), np.concatenate([y[tr], ys[sim_fold != k]]))
        p = clf.predict(features(X[te]))
        accs.append(np.mean(p == y[te]))
        total += confusion(y[te], p)
        sim_acc = np.mean(clf.predict(features(Xs[sim_fold == k])) == ys[sim_fold == k])
        print(f"  fold {k}: TMD {accs[-1]:.4f}   simulated running/cycling {sim_acc:.4f}")
    print(f"  mean {np.mean(accs):.4f} (anchor: random forest on these 8 features, 5-fold by window, 90.3 %)")
    print("  confusion over all folds (rows truth, columns predicted):", CLASSES)
    for i in (0, 1, 4):
        print("   ", CLASSES[i].ljust(11), total[i])

    tr = rows % 5 != 0
    clf = HistGradientBoostingClassifier(**MODEL)
    clf.fit(features(np.vstack([X[tr], Xs[sim_fold != 0]])), np.concatenate([y[tr], ys[sim_fold != 0]]))
    nodes, trees = export(clf, args.out, features(X[:1]).shape[1])
    held = rows % 5 == 0
    print(f"shipped model: fold 0 held out, TMD accuracy {np.mean(clf.predict(features(X[held])) == y[held]):.4f};"
          f" {trees} trees, {nodes} nodes -> {os.path.relpath(args.out, ROOT)}")
    # Reference probabilities for the Swift test that the export is faithful.
    probe = features(X[:3])
    print("probe probabilities (rows 0-2):")
    for r in clf.predict_proba(probe):
        print("   ", " ".join(f"{v:.6f}" for v in r))


if __name__ == "__main__":
    sys.exit(main())
