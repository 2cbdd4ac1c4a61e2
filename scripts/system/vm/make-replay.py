#!/usr/bin/env python3
"""Turns a slice of a BROAD recording (Tests/Fixtures/data/broad) into the uhid emulator's replay file: ten raw
integers per line in the emulated descriptor's units (accel 0.001 g, gyro 0.01 °/s, magn 0.1 µT,
pressure 0.01 Pa), and a JSON file with the truth the system test compares the agent's streams against.

    make-replay.py BROAD.csv FIRST COUNT OUT.txt TRUTH.json [SI.txt]

SI.txt (optional): the I2C chip emulator's replay (i2c-imu-emulator.c), the same samples in SI units and the
board's frame, one line each: "t ax ay az gx gy gz mx my mz p" (s, m/s² specific force, rad/s, µT, Pa); the
emulator quantises them itself, per chip, at the scale its range register selects.

The accelerometer stays the specific force (the kernel's convention, +1 g up at rest); the agent must publish
its opposite in g. BROAD has no barometer: the pressure is a ramp from 101325 Pa down by 0.012 Pa a sample
(about 1 mm of climb), so the altimeter has a known, moving input.
"""
import csv
import json
import sys

G = 9.80665
LSB = {"accel_g": 0.001, "gyro_rad_s": 0.01 * 3.141592653589793 / 180, "magn_uT": 0.1, "pressure_Pa": 0.01}


def main() -> None:
    path, first, count, out, truth_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    si = open(sys.argv[6], "w") if len(sys.argv) > 6 else None
    rows = []
    with open(path, newline="") as f:
        for i, row in enumerate(csv.DictReader(f)):
            if i < first:
                continue
            if len(rows) == count:
                break
            rows.append(row)
    if len(rows) < count:
        sys.exit(f"make-replay.py: {path} has fewer than {first + count} samples")
    truth = {"lsb": LSB, "accelerometer": [], "gyroscope": [], "magnetometer": [], "pressure_kPa": []}
    with open(out, "w") as f:
        for i, row in enumerate(rows):
            acc = [float(row[f"acc_{a}"]) for a in "xyz"]
            gyr = [float(row[f"gyr_{a}"]) for a in "xyz"]
            mag = [float(row[f"mag_{a}"]) for a in "xyz"]
            pressure = 101325.0 - 0.012 * i
            raw = [round(v / G / LSB["accel_g"]) for v in acc]
            raw += [round(v / LSB["gyro_rad_s"]) for v in gyr]
            raw += [round(v / LSB["magn_uT"]) for v in mag]
            raw.append(round(pressure / LSB["pressure_Pa"]))
            f.write(" ".join(str(v) for v in raw) + "\n")
            if si:
                si.write(" ".join(repr(v) for v in [float(row["t_s"]), *acc, *gyr, *mag, pressure]) + "\n")
            # What Core Motion's units and sign make of the original (unquantised) recording.
            truth["accelerometer"].append([-v / G for v in acc])
            truth["gyroscope"].append(gyr)
            truth["magnetometer"].append(mag)
            truth["pressure_kPa"].append(pressure / 1000)
            truth.setdefault("raw", []).append(raw)
    truth["period_s"] = (float(rows[-1]["t_s"]) - float(rows[0]["t_s"])) / (len(rows) - 1)
    with open(truth_path, "w") as f:
        json.dump(truth, f)
    if si:
        si.close()


if __name__ == "__main__":
    main()
