"""The fall detector's features, exactly as the Swift `FallDetector` computes them, vectorised per trial.

The detector summarises the signal in blocks of BLOCK_S seconds on the sample clock: block b holds the samples
with floor((t − t0 + 1e-6) / BLOCK_S) = b, t0 the first sample's time. Per block: the sample count, the sums of
the acceleration vectors, of |a|, |a|² and ||a| − 1|, the largest |a| and the time of its first sample, the
largest smoothed |a| (|a| through a first-order low-pass of time constant τ: s ← s + dt / (τ + dt) (|a| − s),
s = |a| at the first sample; one per τ asked for), and with a gyroscope the largest |ω|.

A candidate impact is a block whose largest |a| is at least CANDIDATE_PEAK_G and above every block of the
0.5 s before it and not below any of the 0.5 s after it. Its features come from whole blocks around it (b the
candidate's block):
- orientation change: the angle between the mean acceleration over blocks [b − 20, b − 10) (2 s to 1 s before)
  and over [b + 10, b + 20) (1 s to 2 s after), degrees — the direction of gravity in the device before and
  after, whatever the device's placement and axes;
- stillness: the standard deviation of |a| over the samples of [b + 10, b + 20), g;
- impact energy: Σ over [b − 5, b + 5) of mean(||a| − 1|) × BLOCK_S, g·s — the area between |a| and 1 g over
  the second around the impact, which does not depend on the sample rate as a peak does;
- smoothed peak: the largest smoothed |a| over the same blocks [b − 5, b + 5), g, per τ — the impact's height
  seen through a fixed bandwidth, so nearly the same at 50 and 200 Hz where the raw peak (the candidate's largest |a|,
  which only places the candidate) grows with the rate: more samples catch more of a spike's top. With τ = 0 it
  is the raw peak (the candidate is the largest |a| of those blocks). The window reaches 0.4 s past the impact's
  block because the low-pass lags the impact by about τ;
- with a gyroscope, the largest |ω| over [b − 10, b + 10), rad/s.
The decision for block b is made when block b + 19 closes (the first sample of block b + 20 arrives), about 2 s
after the impact.
"""
import numpy as np
from scipy.signal import lfilter

BLOCK_S = 0.1
EPS_S = 1e-6
LOCAL_MAX_BLOCKS = 5
PRE = (-20, -10)
POST = (10, 20)
ENERGY = (-5, 5)
GYRO_SPAN = (-10, 10)
CANDIDATE_PEAK_G = 1.6


def smoothed(m, t, tau):
    """|a| through the detector's first-order low-pass of time constant tau (s) on evenly spaced samples t."""
    if tau <= 0 or len(m) < 2:
        return m
    alpha = (t[1] - t[0]) / (tau + t[1] - t[0])
    return lfilter([alpha], [1, -(1 - alpha)], m, zi=[(1 - alpha) * m[0]])[0]


def blocks(t, acc, gyr=None, taus=(0.0,)):
    """Per-block sums (dict of arrays indexed by block) of samples at times t (s), acc (g), gyr (rad/s) or None;
    the largest smoothed |a| per block for each time constant in taus (s), "smax" (blocks × taus)."""
    b = np.floor((t - t[0] + EPS_S) / BLOCK_S).astype(int)
    nb = b[-1] + 1
    m = np.linalg.norm(acc, axis=1)
    out = {"index": b, "n": np.bincount(b, minlength=nb).astype(float)}
    out["sa"] = np.stack([np.bincount(b, acc[:, i], nb) for i in range(3)], 1)
    out["sm"] = np.bincount(b, m, nb)
    out["sm2"] = np.bincount(b, m * m, nb)
    out["sdev"] = np.bincount(b, np.abs(m - 1), nb)
    mx = np.full(nb, -np.inf)
    np.maximum.at(mx, b, m)
    out["max"] = mx
    first = np.full(nb, np.inf)
    hit = m >= mx[b]
    np.minimum.at(first, b[hit], t[hit])
    out["tmax"] = first
    out["smax"] = np.full((nb, len(taus)), -np.inf)
    for i, tau in enumerate(taus):
        np.maximum.at(out["smax"][:, i], b, smoothed(m, t, tau))
    # the time of each block's first sample (the decision for block b is taken at the first sample of b + 20)
    start = np.full(nb, np.inf)
    np.minimum.at(start, b, t)
    out["first_t"] = start
    if gyr is not None:
        gm = np.zeros(nb)
        np.maximum.at(gm, b, np.linalg.norm(gyr, axis=1))
        out["gmax"] = gm
    return out


def candidates(bl):
    """Every candidate block with its features: dict of arrays (one entry per candidate)."""
    mx = bl["max"]
    nb = len(mx)
    idx = []
    for k in np.nonzero(mx >= CANDIDATE_PEAK_G)[0]:
        lo = max(0, k - LOCAL_MAX_BLOCKS)
        if k > lo and mx[k] <= mx[lo:k].max():
            continue
        if mx[k] < mx[k + 1:k + 1 + LOCAL_MAX_BLOCKS].max(initial=-np.inf):
            continue
        # the decision needs a sample in a block after b + 19 (the Swift detector decides when b + 19 closes)
        if not np.isfinite(bl["first_t"][k + POST[1]:]).any():
            continue
        idx.append(k)
    idx = np.array(idx, dtype=int)
    n = bl["n"]
    f = {key: np.zeros(len(idx)) for key in ("peak", "time", "decided", "oc", "still", "energy", "gmax", "valid")}
    f["block"] = idx
    f["speak"] = np.zeros((len(idx), bl["smax"].shape[1]))
    for j, k in enumerate(idx):
        f["peak"][j] = mx[k]
        f["time"][j] = bl["tmax"][k]
        later = bl["first_t"][k + POST[1]:]
        f["decided"][j] = later[np.isfinite(later)][0]
        p0, p1 = max(0, k + PRE[0]), max(0, k + PRE[1])
        s0, s1 = k + POST[0], k + POST[1]
        e0, e1 = max(0, k + ENERGY[0]), k + ENERGY[1]
        f["speak"][j] = bl["smax"][e0:e1].max(0)
        npre = n[p0:p1].sum()
        npost = n[s0:s1].sum()
        if npre == 0 or npost == 0:
            continue
        f["valid"][j] = 1
        f["oc"][j] = angle(bl["sa"][p0:p1].sum(0) / npre, bl["sa"][s0:s1].sum(0) / npost)
        mean = bl["sm"][s0:s1].sum() / npost
        f["still"][j] = np.sqrt(max(bl["sm2"][s0:s1].sum() / npost - mean * mean, 0))
        nn = n[e0:e1]
        ok = nn > 0
        f["energy"][j] = (bl["sdev"][e0:e1][ok] / nn[ok]).sum() * BLOCK_S
        if "gmax" in bl:
            g0, g1 = max(0, k + GYRO_SPAN[0]), k + GYRO_SPAN[1]
            f["gmax"][j] = bl["gmax"][g0:g1].max()
    return f


def angle(u, v):
    """Angle between two vectors, degrees."""
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        return 0.0
    return float(np.degrees(np.arccos(np.clip(np.dot(u, v) / (nu * nv), -1, 1))))


def decimate(trial, step):
    """Every step-th sample from the first (what the agent's decimator picks at 200/step Hz), with its time."""
    t = np.arange(len(trial.acc)) / 200.0
    return t[::step], trial.acc[::step], trial.gyr[::step]
