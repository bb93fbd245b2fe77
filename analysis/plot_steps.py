#!/usr/bin/env python3
"""Optimizer steps vs wall time, one line per setup: plot_steps.py OUT.png NAME=STEPS_CSV...

Each STEPS_CSV is a <setup>_steps.csv written by `swarmlab albert --out DIR` (columns step,t_s).
Exits 3 when matplotlib is missing so the caller can skip the plot with a message.
"""
import csv
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(3)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    fig, ax = plt.subplots(figsize=(8, 5))
    for spec in argv[2:]:
        name, path = spec.split("=", 1)
        hours, steps = [0.0], [0]
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                hours.append(float(row["t_s"]) / 3600.0)
                steps.append(int(row["step"]))
        ax.step(hours, steps, where="post", label=name)
    ax.set_xlabel("wall time (hours)")
    ax.set_ylabel("optimizer steps")
    ax.set_title("ALBERT-large setups: optimizer steps vs wall time (simulated)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(argv[1], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
