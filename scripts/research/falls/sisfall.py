"""SisFall trials as arrays in the agent's units, cached.

SisFall (Sucerquia, López, Vargas-Bonilla, "SisFall: A Fall and Movement Dataset", Sensors 17(1):198, 2017):
one file per trial, SUBJECT/CODE_SUBJECT_RNN.csv.gz, columns adxl345_x..z (raw counts, ±16 g, 13 bits:
g = counts × 32 / 8192, specific force) and itg3200_x..z (raw counts, ±2000 °/s, 16 bits: °/s = counts × 4000 /
65536), 200 Hz. The agent's acceleration is Core Motion's: the opposite of specific force, in g.
"""
import glob
import gzip
import os

import numpy as np

RATE_HZ = 200.0
ACC_G_PER_COUNT = 32.0 / 8192.0
GYR_RAD_S_PER_COUNT = 4000.0 / 65536.0 * np.pi / 180.0


class Trial:
    __slots__ = ("name", "code", "subject", "acc", "gyr")

    def __init__(self, name, raw):
        self.name = name
        self.code, self.subject = name.split("_")[:2]
        # Core Motion's sign: acceleration = −specific force (face up at rest: z = −1).
        self.acc = -raw[:, :3].astype(float) * ACC_G_PER_COUNT
        self.gyr = raw[:, 3:6].astype(float) * GYR_RAD_S_PER_COUNT

    @property
    def is_fall(self):
        return self.code.startswith("F")


def load(data_dir, cache_dir):
    """Every trial under data_dir (SUBJECT/CODE_SUBJECT_RNN.csv.gz), sorted by name; cached raw counts in cache_dir."""
    files = sorted(glob.glob(os.path.join(data_dir, "*", "*.csv.gz")) + glob.glob(os.path.join(data_dir, "*", "*.csv")))
    if not files:
        raise SystemExit(f"no SisFall trials under {data_dir}: expected SUBJECT/CODE_SUBJECT_RNN.csv.gz")
    names = [os.path.basename(f).split(".")[0] for f in files]
    os.makedirs(cache_dir, exist_ok=True)
    cache = os.path.join(cache_dir, "sisfall_raw.npz")
    raw = None
    if os.path.exists(cache):
        z = np.load(cache)
        if sorted(z.files) == sorted(names):
            raw = {n: z[n] for n in names}
    if raw is None:
        raw = {}
        for f, n in zip(files, names):
            opener = gzip.open if f.endswith(".gz") else open
            with opener(f, "rt") as fh:
                raw[n] = np.loadtxt(fh, delimiter=",", skiprows=1, dtype=np.int32)[:, :6]
        np.savez_compressed(cache, **raw)
    return [Trial(n, raw[n]) for n in sorted(names)]
