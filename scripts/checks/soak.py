#!/usr/bin/env python3
"""Soak: the real motion-agent at 1 kHz simulated input with every stream on, against a local mosquitto, for
--minutes; samples RSS, open file descriptors and threads every --every seconds and prints them with the RSS
slope after warm-up (least squares over the samples after --warmup seconds).

usage: scripts/checks/soak.py [--binary PATH] [--minutes 30] [--every 60] [--warmup 120]
Needs mosquitto (/usr/sbin/mosquitto). Records nothing by itself: copy the table into BENCHMARKS.md."""
import argparse, os, socket, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc(pid):
    rss = anon = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("RssAnon:"):
                anon = int(line.split()[1]) * 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return rss, anon, fds, threads, cpu


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", default=os.path.join(ROOT, ".build/release/motion-agent"))
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--every", type=float, default=60)
    p.add_argument("--warmup", type=float, default=120)
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="motion-soak-")
    port = free_port()
    with open(f"{work}/mosquitto.conf", "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", f"{work}/mosquitto.conf"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    with open(f"{work}/config.yaml", "w") as f:
        f.write(f"""device: {{id: soak}}
agent: {{state_dir: {work}/state, log_level: warning}}
source: {{kind: simulated, simulated: {{scenario: mixed-day, rate_hz: 1000}}}}
mqtt: {{host: 127.0.0.1, port: {port}}}
metrics: {{interval_s: 60}}
streams:
  accelerometer: {{rate_hz: 100}}
  gyroscope: {{rate_hz: 100}}
  magnetometer: {{rate_hz: 50}}
  device-motion: {{rate_hz: 100}}
  pedometer: {{enabled: true}}
  activity: {{enabled: true}}
  altimeter: {{enabled: true}}
  submersion: {{enabled: true}}
""")
    agent = subprocess.Popen([a.binary, "run", "--config", f"{work}/config.yaml"],
                             stdout=subprocess.DEVNULL, stderr=open(f"{work}/agent.log", "w"))
    start = time.time()
    samples = []
    print(f"soak: {a.binary}, 1 kHz mixed-day, every stream on, {a.minutes} min (work dir {work})")
    print("  t (s)   RSS (MB)   anon (MB)   fds   threads   cpu (s)")
    try:
        while time.time() - start < a.minutes * 60:
            time.sleep(a.every)
            if agent.poll() is not None:
                sys.exit(f"the agent exited with {agent.returncode}: see {work}/agent.log")
            t = time.time() - start
            rss, anon, fds, threads, cpu = proc(agent.pid)
            samples.append((t, rss, fds, threads, cpu, anon))
            print(f"{t:7.0f}   {rss / 1e6:8.2f}   {anon / 1e6:9.2f}   {fds:4d}   {threads:7d}   {cpu:7.2f}", flush=True)
    finally:
        agent.terminate()
        agent.wait(timeout=20)
        broker.terminate()
    late = [s for s in samples if s[0] >= a.warmup]
    if len(late) >= 2:
        n = len(late)
        mt = sum(s[0] for s in late) / n
        mr = sum(s[1] for s in late) / n
        slope = sum((s[0] - mt) * (s[1] - mr) for s in late) / sum((s[0] - mt) ** 2 for s in late)
        ma = sum(s[5] for s in late) / n
        anon_slope = sum((s[0] - mt) * (s[5] - ma) for s in late) / sum((s[0] - mt) ** 2 for s in late)
        print(f"RSS slope after {a.warmup:.0f} s warm-up: {slope * 3600 / 1e6:+.3f} MB/hour "
              f"(anonymous {anon_slope * 3600 / 1e6:+.3f} MB/hour); "
              f"fds {min(s[2] for s in late)}–{max(s[2] for s in late)}, threads {min(s[3] for s in late)}–{max(s[3] for s in late)}; "
              f"CPU {100 * (late[-1][4] - late[0][4]) / (late[-1][0] - late[0][0]):.2f} % of one core")
    print(f"exit status of the agent after SIGTERM: {agent.returncode}")


if __name__ == "__main__":
    main()
