#!/usr/bin/env python3
"""Cross-check MotionAgent's Swift WMM2025 against two independent Python implementations.

Compiles Sources/MotionModel and Sources/MotionEstimation/WorldMagneticModel*.swift + WMM2025Coefficients.swift
with swiftc into a tiny command-line checker (outside SwiftPM, so no package dependency is added), evaluates
random points (seeded, reproducible) plus NOAA's published test table and a few awkward places, and compares
with pygeomag (pip) and wmm-calculator (pip, NOAA/CIRES's own Python module). Prints the largest differences.
Neither Python package is a dependency of the Swift code or its tests.

Usage (repository root; needs `pip install pygeomag==1.1.0 wmm-calculator==1.4.4` and swiftc on PATH):
    python3 scripts/codegen/wmm/cross_check.py [--points 200] [--seed 2025]
"""

import argparse
import math
import pathlib
import random
import subprocess
import sys
import tempfile
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[3]

DRIVER = r"""
import MotionModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@main
struct Checker {
    static func main() {
        while let line = readLine() {
            let f = line.split(separator: " ").compactMap { Double($0) }
            guard f.count == 4 else { continue }
            do {
                let b = try WorldMagneticModel.wmm2025.field(latitude: f[2], longitude: f[3], altitudeKm: f[1], decimalYear: f[0])
                print(b.northNanotesla, b.eastNanotesla, b.downNanotesla, b.horizontalNanotesla, b.totalNanotesla,
                      b.inclinationDegrees, b.declinationDegrees)
            } catch {
                print("error", error)
            }
        }
    }
}
"""

# NOAA's WMM2025 test values (WMM2025_TEST_VALUES.txt, the technical report's table): year, height km,
# latitude, longitude, X, Y, Z, H, F (nT), I, D (degrees).
NOAA = [
    (2025.0, 0, 80, 0, 6521.6, 145.9, 54791.5, 6523.2, 55178.5, 83.21, 1.28),
    (2025.0, 0, 0, 120, 39677.8, -109.6, -10580.2, 39677.9, 41064.3, -14.93, -0.16),
    (2025.0, 0, -80, 240, 6117.5, 15751.9, -52022.5, 16898.1, 54698.2, -72.00, 68.78),
    (2025.0, 100, 80, 0, 6216.0, 92.4, 52598.8, 6216.7, 52964.9, 83.26, 0.85),
    (2025.0, 100, 0, 120, 37688.6, -96.2, -10152.1, 37688.7, 39032.1, -15.08, -0.15),
    (2025.0, 100, -80, 240, 5907.6, 14780.3, -49540.7, 15917.1, 52035.0, -72.19, 68.21),
    (2027.5, 0, 80, 0, 6500.8, 294.5, 54869.4, 6507.5, 55253.9, 83.24, 2.59),
    (2027.5, 0, 0, 120, 39701.6, -167.4, -10381.8, 39702.0, 41036.9, -14.65, -0.24),
    (2027.5, 0, -80, 240, 6200.7, 15730.3, -51783.7, 16908.3, 54474.2, -71.92, 68.49),
    (2027.5, 100, 80, 0, 6196.7, 233.8, 52670.5, 6201.1, 53034.3, 83.29, 2.16),
    (2027.5, 100, 0, 120, 37711.5, -148.7, -9969.8, 37711.8, 39007.4, -14.81, -0.23),
    (2027.5, 100, -80, 240, 5984.0, 14760.1, -49317.7, 15927.0, 51825.7, -72.10, 67.93),
]
NAMES = ["X", "Y", "Z", "H", "F", "I", "D"]


def build_checker(workdir: pathlib.Path) -> pathlib.Path:
    model_sources = sorted(str(p) for p in (ROOT / "Sources/MotionModel").glob("*.swift"))
    wmm_sources = sorted(str(p) for p in (ROOT / "Sources/MotionEstimation").glob("WorldMagneticModel*.swift"))
    wmm_sources.append(str(ROOT / "Sources/MotionEstimation/WMM2025Coefficients.swift"))
    subprocess.run(["swiftc", "-O", "-parse-as-library", "-module-name", "MotionModel", "-emit-module",
                    "-emit-module-path", str(workdir / "MotionModel.swiftmodule"), "-emit-library", "-static",
                    "-o", str(workdir / "libMotionModel.a"), *model_sources], check=True, cwd=workdir)
    driver = workdir / "Checker.swift"
    driver.write_text(DRIVER)
    binary = workdir / "wmm-check"
    subprocess.run(["swiftc", "-O", "-parse-as-library", "-module-name", "WMMCheck", "-I", str(workdir),
                    "-L", str(workdir), "-lMotionModel", "-o", str(binary), *wmm_sources, str(driver)],
                   check=True, cwd=workdir)
    return binary


def run_swift(binary: pathlib.Path, points):
    text = "".join(f"{t!r} {alt!r} {lat!r} {lon!r}\n" for t, alt, lat, lon in points)
    out = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        if line.startswith("error"):
            raise SystemExit(f"Swift model refused a point: {line}")
        rows.append([float(v) for v in line.split()])
    return rows


def pygeomag_values(points):
    from pygeomag import GeoMag
    model = GeoMag(coefficients_file="wmm/WMM_2025.COF")
    rows = []
    for t, alt, lat, lon in points:
        r = model.calculate(glat=lat, glon=lon, alt=alt, time=t, allow_date_outside_lifespan=False)
        rows.append([r.x, r.y, r.z, r.h, r.f, r.i, r.d])
    return rows


def wmm_calculator_values(points):
    from wmm import wmm_calc
    model = wmm_calc()
    model.setup_time(dyear=[p[0] for p in points])
    model.setup_env([p[2] for p in points], [p[3] for p in points], [p[1] for p in points])
    r = model.get_all()
    return [[r["x"][k], r["y"][k], r["z"][k], r["h"][k], r["f"][k], r["inc"][k], r["dec"][k]]
            for k in range(len(points))]


def angle_difference(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def compare(label: str, points, swift, reference):
    worst = [(0.0, None)] * len(NAMES)
    for k, (s, r) in enumerate(zip(swift, reference)):
        for j in range(len(NAMES)):
            d = angle_difference(s[j], r[j]) if NAMES[j] in ("I", "D") else abs(s[j] - r[j])
            if d > worst[j][0]:
                worst[j] = (d, points[k])
    print(f"{label}:")
    for j, name in enumerate(NAMES):
        unit = "°" if name in ("I", "D") else " nT"
        print(f"  max |Δ{name}| = {worst[j][0]:.3g}{unit}  at (year, km, lat, lon) = {worst[j][1]}")
    return max(w[0] for j, w in enumerate(worst) if NAMES[j] not in ("I", "D")), \
        max(w[0] for j, w in enumerate(worst) if NAMES[j] in ("I", "D"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    rng = random.Random(args.seed)
    points = []
    for _ in range(args.points):
        # Uniform on the sphere, so the polar caps get their share; heights over the model's whole range.
        lat = math.degrees(math.asin(rng.uniform(-1.0, 1.0)))
        points.append((rng.uniform(2025.0, 2030.0), rng.uniform(-1.0, 850.0), lat, rng.uniform(-180.0, 360.0)))

    with tempfile.TemporaryDirectory() as tmp:
        binary = build_checker(pathlib.Path(tmp))
        swift = run_swift(binary, points)
        noaa_points = [row[:4] for row in NOAA]
        noaa_swift = run_swift(binary, noaa_points)
        # At and 1e-4° from the geographic poles. Compared with pygeomag only: wmm-calculator 1.4.4 moves
        # pole inputs by 1e-6° and, at -89.9999°, returns the northern polar field (Z > 0), so it is no
        # reference there.
        near_pole = [(2026.0, 0.0, lat, lon) for lat in (90.0, 89.9999) for lon in (0.0, 30.0, 200.0)] + \
                    [(2029.0, 10.0, lat, lon) for lat in (-90.0, -89.9999) for lon in (10.0, 135.0)]
        near_swift = run_swift(binary, near_pole)

    print(f"{len(points)} random points, seed {args.seed}, years 2025.0-2030.0, heights -1...850 km")
    nt_py, deg_py = compare("Swift vs pygeomag 1.1.0", points, swift, pygeomag_values(points))
    nt_nc, deg_nc = compare("Swift vs wmm-calculator 1.4.4", points, swift, wmm_calculator_values(points))
    compare("Swift vs pygeomag 1.1.0 at and 1e-4° from the geographic poles", near_pole, near_swift,
            pygeomag_values(near_pole))
    published = [list(row[4:]) for row in NOAA]
    compare("Swift vs NOAA WMM2025 test values (published to 0.1 nT, 0.01°)", noaa_points, noaa_swift, published)
    print(f"summary: max field difference {max(nt_py, nt_nc):.3g} nT, max angle difference "
          f"{max(deg_py, deg_nc):.3g}° over {len(points)} random points")


if __name__ == "__main__":
    main()
