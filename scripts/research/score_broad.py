#!/usr/bin/env python3
"""Scores an orientation estimate against a BROAD trial's optical reference, as the BROAD benchmark defines it
(Laidig, Caruso, Cereatti, Seel, "BROAD — A Benchmark for Robust Inertial Orientation Estimation", Data 6(7):72,
2021, §3): with e = q_est ⊗ conj(q_ref), both sensor → ENU, the errors are total = 2 acos|w|,
heading = 2 atan|z / w| and inclination = 2 acos √(w² + z²); each is an RMS in degrees over the samples marked
moving, skipping those where the markers were hidden (NaN reference).

    score_broad.py TRIAL.csv ESTIMATE.csv

TRIAL.csv: a BROAD trial with opt_qw..opt_qz and movement columns. ESTIMATE.csv: header qw,qx,qy,qz, one row
per trial sample. Prints `total T heading H inclination I`. Needs numpy.
"""
import sys

import numpy as np


def hamilton(a, b):
    w1, x1, y1, z1 = a.T
    w2, x2, y2, z2 = b.T
    return np.stack([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ], axis=1)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    trial = np.genfromtxt(sys.argv[1], delimiter=",", names=True)
    estimate = np.genfromtxt(sys.argv[2], delimiter=",", names=True)
    reference = np.column_stack([trial[k] for k in ("opt_qw", "opt_qx", "opt_qy", "opt_qz")])
    q = np.column_stack([estimate[k] for k in ("qw", "qx", "qy", "qz")])
    if len(q) != len(reference):
        sys.exit(f"the estimate has {len(q)} rows and the trial {len(reference)}: one estimate per sample is needed")
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    conjugate = reference * np.array([1, -1, -1, -1])
    e = hamilton(q, conjugate)
    w, z = e[:, 0], e[:, 3]
    moving = trial["movement"].astype(bool)

    def rms(angle):
        return float(np.degrees(np.sqrt(np.nanmean(angle[moving] ** 2))))

    total = rms(2 * np.arccos(np.clip(np.abs(w), 0, 1)))
    heading = rms(2 * np.arctan(np.abs(z / w)))
    inclination = rms(2 * np.arccos(np.clip(np.sqrt(w ** 2 + z ** 2), 0, 1)))
    print(f"total {total:.3f} heading {heading:.3f} inclination {inclination:.3f}")


if __name__ == "__main__":
    main()
