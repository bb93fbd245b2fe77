#!/usr/bin/env python3
"""Training curve of Hydra's distribution policy, one panel per composition:
plot_placement.py OUT.png CURVE_CSV NAME=EQUAL_S,PROPORTIONAL_S,PLANNER_S...

CURVE_CSV is the curve.csv written by `swarmlab placement --out DIR` (columns update, composition,
mean_step_s, greedy_step_s); each NAME=... gives that composition's baseline step seconds, drawn as
horizontal lines. Exits 3 when matplotlib is missing so the caller can skip the plot with a message.
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
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    baselines = {}
    for spec in argv[3:]:
        name, values = spec.split("=", 1)
        baselines[name] = [float(v) for v in values.split(",")]
    curves = {name: ([], [], []) for name in baselines}
    with open(argv[2], newline="") as f:
        for row in csv.DictReader(f):
            update, mean, greedy = curves[row["composition"]]
            update.append(int(row["update"]))
            mean.append(float(row["mean_step_s"]))
            greedy.append(float(row["greedy_step_s"]))
    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4.2), squeeze=False)
    for ax, (name, (update, mean, greedy)) in zip(axes[0], curves.items()):
        ax.plot(update, mean, color="tab:blue", alpha=0.6, label="policy, sampled (mean)")
        ax.plot(update, greedy, color="tab:blue", label="policy, most likely sizes")
        for value, label, color in zip(baselines[name], ["equal", "proportional", "DeDLOC planner"],
                                       ["tab:gray", "tab:green", "tab:red"]):
            ax.axhline(value, linestyle="--", color=color, label=label)
        ax.set_title(name)
        ax.set_xlabel("policy update (REINFORCE)")
        ax.set_ylabel("step time (s)")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Hydra's distribution policy: step time while training (simulated)")
    fig.tight_layout()
    fig.savefig(argv[1], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
