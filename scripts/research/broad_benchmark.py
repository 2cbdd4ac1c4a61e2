#!/usr/bin/env python3
"""Orientation accuracy on BROAD: MotionAgent's estimator vs vqf 2.1.2 and imufusion, side by side.

BROAD: Laidig, Caruso, Cereatti, Seel, "BROAD — A Benchmark for Robust Inertial Orientation Estimation",
Data 6(7):72, 2021 (CC-BY-4.0); the trials are in $MOTION_AGENT_DATA/broad (or --data), scored with
scripts/research/score_broad.py (total / heading / inclination RMSE, degrees, over the moving samples).

usage: scripts/research/broad_benchmark.py [--data DIR] [--scorer FILE] [--bench FILE] [--skip-build] [--passes N]
  Builds `swift build -c release --product motion-bench` (unless --skip-build), then for every trial runs
  - ours:      motion-bench broad (DeviceMotionEstimator, xMagneticNorthZVertical, as the agent ships it)
  - vqf:       vqf 2.1.2 VQF 9D with defaults (pip install vqf==2.1.2)
  - imufusion: imufusion Ahrs 9D, gain 0.5, rejection 10, timeout 5 s (pip install imufusion)
and prints the table, then ns per 9D and 6D update of ours vs vqf's C++ core (VQF.updateBatch / N).
Needs numpy, vqf, imufusion."""
import argparse, glob, os, subprocess, sys, tempfile, time
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
G0 = 9.80665


def qmul(a, b):
    w1, x1, y1, z1 = a.T; w2, x2, y2, z2 = b.T
    return np.stack([w1*w2 - x1*x2 - y1*y2 - z1*z2, w1*x2 + x1*w2 + y1*z2 - z1*y2,
                     w1*y2 - x1*z2 + y1*w2 + z1*x2, w1*z2 + x1*y2 - y1*x2 + z1*w2], axis=1)


def load(path):
    d = np.genfromtxt(path, delimiter=',', names=True)
    col = lambda p: np.ascontiguousarray(np.column_stack([d[p + '_x'], d[p + '_y'], d[p + '_z']]))
    return d, col('gyr'), col('acc'), col('mag')


def write(path, q):
    np.savetxt(path, q, delimiter=',', header='qw,qx,qy,qz', comments='', fmt='%.17g')


def score(scorer, trial, est):
    out = subprocess.run([sys.executable, scorer, trial, est], check=True, capture_output=True, text=True).stdout
    f = out.split()
    return float(f[1]), float(f[3]), float(f[5])


def run_vqf(d, gyr, acc, mag):
    import vqf
    ts = (d['t_s'][-1] - d['t_s'][0]) / (len(d) - 1)
    return vqf.VQF(ts).updateBatch(gyr, acc, mag)['quat9D']


def run_imufusion(d, gyr, acc, mag):
    import imufusion
    rate = (len(d) - 1) / (d['t_s'][-1] - d['t_s'][0])
    ahrs = imufusion.Ahrs()
    s = imufusion.AhrsSettings()
    s.convention = imufusion.CONVENTION_NWU
    s.gain, s.gyroscope_range, s.acceleration_rejection, s.magnetic_rejection = 0.5, 2000, 10, 10
    s.sample_rate, s.rejection_timeout = rate, 5.0
    ahrs.set_settings(s)
    g, a = np.degrees(gyr), acc / G0
    q = np.empty((len(d), 4))
    for i in range(len(d)):
        ahrs.update(g[i], a[i], mag[i])
        q[i] = ahrs.get_quaternion()
    # imufusion outputs NWU whatever the convention setting says (imufusion 1.3.3, checked against BROAD's reference): to ENU.
    qz90 = np.tile([np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)], (len(q), 1))
    return qmul(qz90, q)


def vqf_ns(d, gyr, acc, mag, passes):
    import vqf
    ts = (d['t_s'][-1] - d['t_s'][0]) / (len(d) - 1)
    best9 = best6 = float('inf')
    for _ in range(passes):
        f = vqf.VQF(ts); t0 = time.perf_counter_ns(); f.updateBatch(gyr, acc, mag); best9 = min(best9, time.perf_counter_ns() - t0)
        f = vqf.VQF(ts); t0 = time.perf_counter_ns(); f.updateBatch(gyr, acc); best6 = min(best6, time.perf_counter_ns() - t0)
    return best9 / len(d), best6 / len(d)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--data', default=os.path.join(os.environ.get('MOTION_AGENT_DATA', 'data'), 'broad'))
    p.add_argument('--scorer', default=os.path.join(ROOT, 'scripts', 'research', 'score_broad.py'))
    p.add_argument('--bench', default=os.path.join(ROOT, '.build', 'release', 'motion-bench'))
    p.add_argument('--skip-build', action='store_true')
    p.add_argument('--passes', type=int, default=5, help='timing passes (best is reported)')
    args = p.parse_args()
    if not args.skip_build:
        subprocess.run(['swift', 'build', '-c', 'release', '--product', 'motion-bench'], cwd=ROOT, check=True)
    trials = sorted(glob.glob(os.path.join(args.data, '*.csv')))
    if not trials:
        sys.exit(f'no trials in {args.data} — pass --data with the BROAD CSV directory')
    names = ['ours', 'vqf 2.1.2', 'imufusion']
    results = {n: [] for n in names}
    speed = None
    with tempfile.TemporaryDirectory() as tmp:
        for trial in trials:
            d, gyr, acc, mag = load(trial)
            est = os.path.join(tmp, 'ours.csv')
            timing = ['--timing-passes', str(args.passes)] if speed is None else []
            out = subprocess.run([args.bench, 'broad', '--trial', trial, '--output', est] + timing,
                                 check=True, capture_output=True, text=True).stdout
            if speed is None:
                f = out.split()
                ours9, ours6 = float(f[f.index('9D') + 1]), float(f[f.index('6D') + 1])
                v9, v6 = vqf_ns(d, gyr, acc, mag, args.passes)
                speed = (os.path.basename(trial), ours9, ours6, v9, v6)
            results['ours'].append(score(args.scorer, trial, est))
            for name, fn in (('vqf 2.1.2', run_vqf), ('imufusion', run_imufusion)):
                path = os.path.join(tmp, 'other.csv')
                write(path, fn(d, gyr, acc, mag))
                results[name].append(score(args.scorer, trial, path))
    short = [os.path.basename(t).split('_')[0] for t in trials]
    print('RMSE in degrees, total / heading / inclination, over the moving samples (score_broad.py)')
    print('| filter | ' + ' | '.join(short) + ' | mean |')
    print('|---' * (len(short) + 2) + '|')
    for n in names:
        r = np.array(results[n])
        cells = ['%.2f / %.2f / %.2f' % tuple(x) for x in r] + ['**%.2f / %.2f / %.2f**' % tuple(r.mean(axis=0))]
        print(f'| {n} | ' + ' | '.join(cells) + ' |')
    t, o9, o6, v9, v6 = speed
    print(f'speed on {t}: ours 9D {o9:.0f} ns/update, 6D {o6:.0f} ns/update; '
          f'vqf C++ updateBatch 9D {v9:.0f} ns, 6D {v6:.0f} ns; ratio ours/vqf 9D {o9 / v9:.2f}, 6D {o6 / v6:.2f}')


if __name__ == '__main__':
    main()
