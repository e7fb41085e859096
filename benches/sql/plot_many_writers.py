"""Draws the many-writers benchmark (benches/sql/many_writers.sh) from its CSV.

Left: generation throughput by sessions, sno_generate against nextval, with one partition's
capacity. Right: primary-key index bytes per row for each key type, one writer against many
(bulk, plain and hash-partitioned) and one-row transactions by clients.

Usage: plot_many_writers.py RESULTS.csv OUT.png "LABEL"
"""

import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file backend)

CAPACITY_M_PER_S = 16.384
KEYS = ["bigint", "sno", "uuid"]
COLOURS = {"bigint": "#777777", "sno": "#1f77b4", "uuid": "#ff7f0e", "nextval": "#777777"}


def read(path):
    rows = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows[(row["part"], row["measure"], row["key"])][int(row["x"])] = float(row["value"])
    return rows


def main(path, out, label):
    rows = read(path)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))

    for key in ["sno", "nextval"]:
        series = rows[("generation", "M IDs/s", key)]
        xs = sorted(series)
        name = "sno_generate(1)" if key == "sno" else "nextval()"
        left.plot(xs, [series[x] for x in xs], marker="o", color=COLOURS[key], label=name)
    left.axhline(CAPACITY_M_PER_S, linestyle="--", color="#2ca02c", label="one partition's capacity")
    left.set_xscale("log", base=2)
    left.set_xlabel("sessions generating at once")
    left.set_ylabel("million IDs per second")
    left.set_title("Generation alone")
    left.legend()

    groups = []
    for part in ["bulk plain", "bulk hash"]:
        for x in sorted(rows[(part, "index bytes/row", "sno")]):
            groups.append((part, x, f"{part.split()[1]}\n{x} writer{'s' if x > 1 else ''}"))
    for x in sorted(rows[("pgbench", "index bytes/row", "sno")]):
        groups.append(("pgbench", x, f"1-row tx\n{x} client{'s' if x > 1 else ''}"))
    width = 0.27
    for i, key in enumerate(KEYS):
        values = [rows[(part, "index bytes/row", key)].get(x, 0) for part, x, _ in groups]
        right.bar([g + (i - 1) * width for g in range(len(groups))], values, width,
                  color=COLOURS[key], label=key)
    right.set_xticks(range(len(groups)), [name for _, _, name in groups], fontsize=8)
    right.set_ylabel("primary-key index bytes per row")
    right.set_title("Index size")
    right.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))

    fig.suptitle(f"sno with many writers ({label})")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(*sys.argv[1:4])
