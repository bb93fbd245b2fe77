#!/usr/bin/env python3
"""Loss against wall time and against step for a live training launch:
plot_live_training.py OUT.png METRICS_CSV

METRICS_CSV is the metrics.csv `swarmlab launch --train` writes (columns step,time_s,loss,
test_accuracy,...). Training loss (members' mean, weighted by samples) on both panels; test
accuracy, where the backbone evaluated, on a second axis. Exits 3 when matplotlib is missing so the
caller can skip the plot with a message.
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
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    steps, times, losses, acc_steps, acc_times, accs = [], [], [], [], [], []
    with open(argv[2], newline="") as f:
        for row in csv.DictReader(f):
            if row["loss"]:
                steps.append(int(row["step"]))
                times.append(float(row["time_s"]))
                losses.append(float(row["loss"]))
            if row["test_accuracy"]:
                acc_steps.append(int(row["step"]))
                acc_times.append(float(row["time_s"]))
                accs.append(float(row["test_accuracy"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, xs, acc_xs, label in ((axes[0], times, acc_times, "wall time (s)"), (axes[1], steps, acc_steps, "global step")):
        ax.plot(xs, losses, color="tab:blue", linewidth=1, label="training loss")
        ax.set_xlabel(label)
        ax.set_ylabel("training loss")
        ax.grid(alpha=0.3)
        if accs:
            twin = ax.twinx()
            twin.plot(acc_xs, accs, color="tab:orange", marker="o", markersize=3, linewidth=1, label="test accuracy")
            twin.set_ylabel("test accuracy")
            twin.set_ylim(0, 1)
    fig.suptitle("live training: loss against time and against step")
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
