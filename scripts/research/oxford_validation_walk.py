#!/usr/bin/env python3
"""Turns walks of the Oxford step-counter set's `validation` folder into the layout `motion-bench steps` reads.

Usage: oxford_validation_walk.py OUTPUT_FOLDER WALK.csv [WALK.csv ...]

A validation walk (Oxford-step-counter/DataSet, folder `validation`; Salvi, Velardo, Brynes, Tarassenko, EMBC 2018;
CC BY 4.0) is one CSV without a header: timestamp (ns), acc_x, acc_y, acc_z (m/s², Android axes, gravity
included), then three running step counts — the authors' algorithm's, the ground-truth device's, the phone's
hardware counter's. For each walk `userN_position_T.csv` this writes

    OUTPUT_FOLDER/userN_position/accelerometer.csv           timestamp_ns, accuracy (3), acc_x, acc_y, acc_z
    OUTPUT_FOLDER/userN_position/groundtruth_footswitch.csv  timestamp_ns, foot_switch_a, foot_switch_b

and a line in OUTPUT_FOLDER/stats.csv (the truth's final count). The accelerometer values are copied as text,
unchanged. The truth has no foot switches: each increment of its count becomes a one-sample pulse on switch a or b
in turn (so the bench's rising edges are its steps, and its "cleaned" truth, which only acts on same-foot contacts,
leaves them as they are).

    python3 scripts/research/oxford_validation_walk.py /tmp/oxval \\
        Tests/Fixtures/data/steps/validation/user1_backpocket_1506422470497.csv
    .build/release/motion-bench steps --data /tmp/oxval [--rate 50] [--trace DIR]
"""

import os
import sys

POSITIONS = {
    "hand": "InHand",
    "frontpocket": "FrontPocket",
    "backpocket": "BackPocket",
    "neckpouch": "NeckPouch",
    "bag": "Bag",
    "armband": "Armband",
}


def convert(path, output):
    name = os.path.basename(path)[: -len(".csv")]
    parts = name.split("_")
    if len(parts) != 3:
        sys.exit(f"{path}: expected a name like user1_backpocket_1506422470497.csv")
    user, position, _ = parts
    walk = f"{user}_{position}"
    folder = os.path.join(output, walk)
    os.makedirs(folder, exist_ok=True)
    first = last = None
    previous = 0
    steps = 0
    with open(path) as source, open(os.path.join(folder, "accelerometer.csv"), "w") as acc, open(
        os.path.join(folder, "groundtruth_footswitch.csv"), "w"
    ) as truth:
        acc.write("timestamp_ns,accuracy,acc_x,acc_y,acc_z\n")
        truth.write("timestamp_ns,foot_switch_a,foot_switch_b\n")
        for line in source:
            fields = line.strip().split(",")
            if len(fields) < 6:
                continue
            ns, x, y, z, count = fields[0], fields[1], fields[2], fields[3], int(fields[5])
            first = first if first is not None else int(ns)
            last = int(ns)
            acc.write(f"{ns},3,{x},{y},{z}\n")
            a = b = 0
            if count > previous:
                if steps % 2 == 0:
                    a = 1
                else:
                    b = 1
                steps += count - previous
            previous = count
            truth.write(f"{ns},{a},{b}\n")
    duration = round((last - first) * 1e-9)
    return f"{walk}, {user}, S6, {POSITIONS.get(position, position)}, Hard, {duration}, {previous}"


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    output = sys.argv[1]
    os.makedirs(output, exist_ok=True)
    lines = [convert(path, output) for path in sys.argv[2:]]
    with open(os.path.join(output, "stats.csv"), "w") as stats:
        stats.write("#dir, user, phone, position, surface, duration(s), steps\n")
        for line in lines:
            stats.write(line + "\n")


if __name__ == "__main__":
    main()
