#!/usr/bin/env python3
"""Learning@home convergence, live: plot_dmoe_convergence.py CONVERGENCE_CSV LOSS_CSV OUT.png

Inputs are `swarmlab dmoe converge`'s convergence.csv (run, time_s, batch, test_accuracy: the
first trainer's test accuracy) and loss.csv (run, time_s, trainer, loss: every trainer's batches).
Two panels against wall time: the training loss (a moving mean over the last 50 batches of all
trainers) and the test accuracy, one line per run (DMoE and dense, high and low delay). Exits 3
when matplotlib is missing so the caller can skip the plot with a message.
"""
import csv
import sys
from collections import defaultdict

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(3)

STYLES = {"dmoe-high": ("tab:blue", "-"), "dmoe-low": ("tab:blue", "--"),
          "dense-high": ("tab:orange", "-"), "dense-low": ("tab:orange", "--")}
LABELS = {"dmoe-high": "DMoE, high delay", "dmoe-low": "DMoE, low delay",
          "dense-high": "dense, high delay", "dense-low": "dense, low delay"}
WINDOW = 50


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    accuracy, losses = defaultdict(list), defaultdict(list)
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            accuracy[row["run"]].append((float(row["time_s"]), float(row["test_accuracy"])))
    with open(argv[2], newline="") as f:
        for row in csv.DictReader(f):
            losses[row["run"]].append((float(row["time_s"]), float(row["loss"])))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for run in sorted(set(accuracy) | set(losses)):
        color, style = STYLES.get(run, (None, "-"))
        points = sorted(losses.get(run, []))
        xs, ys, window = [], [], []
        for t, v in points:
            window.append(v)
            if len(window) > WINDOW:
                window.pop(0)
            xs.append(t)
            ys.append(sum(window) / len(window))
        left.plot(xs, ys, style, color=color, label=LABELS.get(run, run))
        acc = sorted(accuracy.get(run, []))
        right.plot([t for t, _ in acc], [a for _, a in acc], style, color=color, marker=".", label=LABELS.get(run, run))
    left.set_xlabel("wall time (s)")
    left.set_ylabel(f"training loss (mean of last {WINDOW} batches)")
    right.set_xlabel("wall time (s)")
    right.set_ylabel("test accuracy (first trainer)")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("Learning@home live on Fashion-MNIST: DMoE vs dense of equal compute")
    fig.tight_layout()
    fig.savefig(argv[3], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
