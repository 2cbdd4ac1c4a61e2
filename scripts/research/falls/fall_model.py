"""The fall detector's model, exactly as the Swift `FallDetector` computes it, vectorised per trial.

The detector summarises the signal in blocks of BLOCK_S seconds on the sample clock (block b holds the samples
with floor((t − t0 + 1e-6) / BLOCK_S) = b). Per block: the sample count, the sum of the acceleration vectors, of
|a|, |a|² and ||a| − 1|, the largest |a| and its time. A candidate impact is a block whose largest |a| is at
least the impact threshold and the largest of the blocks within ±0.5 s (strictly above the earlier ones). Its
features come from whole blocks around it (b = the candidate's block):
- orientation change: the angle between the mean acceleration over blocks [b − 20, b − 10) (2 s to 1 s before)
  and over [b + 10, b + 20) (1 s to 2 s after);
- stillness: the standard deviation of |a| over the samples of [b + 10, b + 20);
- impact energy: Σ over [b − 5, b + 5) of mean(||a| − 1|) × BLOCK_S, g·s (the area between |a| and 1 g
  over the second around the impact);
- with a gyroscope, the largest |ω| over [b − 10, b + 10) and the attitude change over the same span as the
  orientation change, from the integrated rotation.
The decision for block b is made when block b + 19 closes, ≤ 2 s after the impact.
"""
import numpy as np

BLOCK_S = 0.1
EPS_S = 1e-6
LOCAL_MAX_BLOCKS = 5
PRE = (-20, -10)
POST = (10, 20)
ENERGY = (-5, 5)
GYRO_SPAN = (-10, 10)


def baseline_deviation(t, m, tau_s):
    """|m − b| per sample, b the magnitude's baseline before this sample: b ← b + α (m − b), α = dt / (τ + dt),
    starting at the first sample's magnitude."""
    from scipy.signal import lfilter
    dt = t[1] - t[0]
    alpha = dt / (tau_s + dt)
    # b_n (after sample n) = (1 − α) b_{n−1} + α m_n, b_0 = m_0; the deviation uses b_{n−1}.
    b, _ = lfilter([alpha], [1, -(1 - alpha)], m[1:], zi=[(1 - alpha) * m[0]])
    prev = np.r_[m[0], m[0], b[:-1]] if len(m) > 1 else np.r_[m[0]]
    return np.abs(m - prev[: len(m)])


def blocks(t, acc, gyr=None, tau_s=None):
    """Per-block sums (dict of arrays indexed by block), for samples at times t (s), acc (g), gyr (rad/s) or None."""
    b = np.floor((t - t[0] + EPS_S) / BLOCK_S).astype(int)
    nb = b[-1] + 1
    m = np.linalg.norm(acc, axis=1)
    out = {}
    out["n"] = np.bincount(b, minlength=nb).astype(float)
    out["sa"] = np.stack([np.bincount(b, acc[:, i], nb) for i in range(3)], 1)
    out["sm"] = np.bincount(b, m, nb)
    out["sm2"] = np.bincount(b, m * m, nb)
    out["sdev"] = np.bincount(b, np.abs(m - 1), nb)
    if tau_s is not None:
        out["sdev"] = np.bincount(b, baseline_deviation(t, m, tau_s), nb)
    mx = np.full(nb, -np.inf)
    np.maximum.at(mx, b, m)
    out["max"] = mx
    # time of the block's largest |a|: first sample reaching it
    first = np.full(nb, np.inf)
    hit = m >= mx[b]
    np.minimum.at(first, b[hit], t[hit])
    out["tmax"] = first
    out["start"] = t[0] + np.arange(nb) * BLOCK_S
    if gyr is not None:
        w = np.linalg.norm(gyr, axis=1)
        gm = np.zeros(nb)
        np.maximum.at(gm, b, w)
        out["gmax"] = gm
        out["sw"] = np.bincount(b, w, nb)
        out["q_end"] = integrate_attitude(t, gyr, b, nb)
    return out


def quat_mul(p, q):
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def integrate_attitude(t, gyr, b, nb):
    """The gyroscope's attitude (device → a fixed frame) at the end of every block, from q(t0) = identity: per
    sample q ← q ⊗ exp(ω · dt / 2), dt to the previous sample (the first sample rotates nothing). The running
    product is a parallel prefix scan (quaternion products are associative), equal to the sequential one
    within rounding."""
    dt = np.diff(t, prepend=t[0])
    w = np.linalg.norm(gyr, axis=1)
    half = 0.5 * w * dt
    s = np.where(w > 0, np.sin(half) / np.where(w > 0, w, 1), 0.0)
    q = np.column_stack([np.cos(half), gyr * s[:, None]]).T  # 4 × N
    shift = 1
    n = q.shape[1]
    while shift < n:
        prev = np.concatenate([np.tile(np.array([[1.0], [0], [0], [0]]), (1, shift)), q[:, :-shift]], axis=1)
        q = quat_mul(prev, q)
        shift *= 2
    q = (q / np.linalg.norm(q, axis=0)).T
    out = np.tile(np.array([1.0, 0, 0, 0]), (nb, 1))
    last = np.r_[np.nonzero(np.diff(b))[0], len(b) - 1]
    out[b[last]] = q[last]
    # empty blocks keep the attitude of the block before them
    have = np.zeros(nb, bool)
    have[b[last]] = True
    for k in range(1, nb):
        if not have[k]:
            out[k] = out[k - 1]
    return out


def candidates(bl, impact_g, use_gyro):
    """Feature rows of every candidate block: dict of arrays."""
    mx = bl["max"]
    nb = len(mx)
    idx = []
    for k in np.nonzero(mx >= impact_g)[0]:
        lo = max(0, k - LOCAL_MAX_BLOCKS)
        if k > lo and mx[k] <= mx[lo:k].max():
            continue
        if mx[k] < mx[k + 1:k + 1 + LOCAL_MAX_BLOCKS].max(initial=-np.inf):
            continue
        if k + POST[1] >= nb:  # block b + 19 never closed: no later sample, no decision
            continue
        idx.append(k)
    idx = np.array(idx, dtype=int)
    f = {"block": idx, "peak": mx[idx] if len(idx) else np.zeros(0), "time": bl["tmax"][idx] if len(idx) else np.zeros(0)}
    n = bl["n"]
    keys = ["oc", "still", "energy", "gmax", "ocg", "valid", "gpost", "gint"]
    for key in keys:
        f[key] = np.zeros(len(idx))
    # per-block profiles around the candidate, for the research only: mean ||a| − 1|, mean |a|, std |a|, blocks −20…19
    f["dev_profile"] = np.full((len(idx), 40), np.nan)
    f["mean_profile"] = np.full((len(idx), 40), np.nan)
    f["gmax_profile"] = np.full((len(idx), 40), np.nan)
    for j, k in enumerate(idx):
        p0, p1 = max(0, k + PRE[0]), max(0, k + PRE[1])
        s0, s1 = k + POST[0], k + POST[1]
        npre = n[p0:p1].sum()
        npost = n[s0:s1].sum()
        if npre == 0 or npost == 0:
            continue
        f["valid"][j] = 1
        for r in range(-20, 20):
            if 0 <= k + r < nb and n[k + r] > 0:
                f["dev_profile"][j, r + 20] = bl["sdev"][k + r] / n[k + r]
                f["mean_profile"][j, r + 20] = bl["sm"][k + r] / n[k + r]
                if use_gyro:
                    f["gmax_profile"][j, r + 20] = bl["gmax"][k + r]
        gp = bl["sa"][p0:p1].sum(0) / npre
        gq = bl["sa"][s0:s1].sum(0) / npost
        f["oc"][j] = angle(gp, gq)
        mean = bl["sm"][s0:s1].sum() / npost
        var = bl["sm2"][s0:s1].sum() / npost - mean * mean
        f["still"][j] = np.sqrt(max(var, 0))
        e0, e1 = max(0, k + ENERGY[0]), k + ENERGY[1]
        nn = n[e0:e1]
        ok = nn > 0
        f["energy"][j] = (bl["sdev"][e0:e1][ok] / nn[ok]).sum() * BLOCK_S
        if use_gyro:
            g0, g1 = max(0, k + GYRO_SPAN[0]), k + GYRO_SPAN[1]
            f["gmax"][j] = bl["gmax"][g0:g1].max()
            f["gpost"][j] = bl["sw"][s0:s1].sum() / npost
            nn = n[g0:g1]
            ok = nn > 0
            f["gint"][j] = (bl["sw"][g0:g1][ok] / nn[ok]).sum() * BLOCK_S
            # tilt change from the gyroscope: gravity before, in the device frame, carried by the rotation from the
            # middle of the pre window to the middle of the post window, against itself.
            qa = bl["q_end"][max(0, k - 15)]
            qb = bl["q_end"][k + 15]
            rel = quat_mul(np.array([qa[0], -qa[1], -qa[2], -qa[3]]), qb)  # qa⁻¹ ⊗ qb: device_b → device_a
            gb = rotate(np.array([rel[0], -rel[1], -rel[2], -rel[3]]), gp)  # gravity seen in device_b
            f["ocg"][j] = angle(gp, gb)
    return f


def rotate(q, v):
    w, x, y, z = q
    u = np.array([x, y, z])
    return v + 2 * np.cross(u, np.cross(u, v) + w * v)


def angle(u, v):
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        return 0.0
    return float(np.degrees(np.arccos(np.clip(np.dot(u, v) / (nu * nv), -1, 1))))


def decimate(trial, step):
    """Every step-th sample (the agent's decimator picks samples the same way), with its own timestamp."""
    t = np.arange(len(trial.acc)) / 200.0
    return t[::step], trial.acc[::step], trial.gyr[::step]
