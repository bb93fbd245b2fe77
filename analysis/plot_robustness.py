#!/usr/bin/env python3
"""Byzantine-robust averaging: plot_robustness.py ROBUSTNESS_CSV LOSS_CSV OUT.png

Inputs are `swarmlab robust --out DIR`'s robustness.csv (one row per run) and loss.csv (one row
per run and step). Left: the averaged gradient's mean distance from the honest mean against the
number of attackers, per attack, with the weighted mean (solid) and CenteredClip (dashed). Right:
the honest peers' training loss per step with the most attackers, per attack, both aggregators.
Exits 3 when matplotlib is missing so the caller can skip the plot with a message.
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


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    distance = defaultdict(list)  # (attack, clip) -> [(attackers, distance)]
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            key = (row["attack"], row["centered_clip"] == "1")
            distance[key].append((int(row["attackers"]), float(row["mean_relative_distance"])))
    loss = defaultdict(list)  # (attack, attackers, clip) -> [(step, loss)]
    with open(argv[2], newline="") as f:
        for row in csv.DictReader(f):
            key = (row["attack"], int(row["attackers"]), row["centered_clip"] == "1")
            loss[key].append((int(row["step"]), float(row["train_loss"])))

    attacks = sorted({a for a, _ in distance if a != "none"})
    colours = dict(zip(attacks, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for attack in attacks:
        for clip in (False, True):
            points = sorted(distance.get((attack, clip), []))
            if points:
                left.plot([p[0] for p in points], [max(p[1], 1e-4) for p in points], "--" if clip else "-",
                          marker="o", color=colours[attack], label=f"{attack}, {'CenteredClip' if clip else 'mean'}")
    left.set_yscale("log")
    left.set_xlabel("attackers (of the collaboration's peers)")
    left.set_ylabel("|average - honest mean| / |honest mean| (mean over rounds)")
    left.set_title("distance of the averaged gradient from the honest mean")
    left.grid(True, alpha=0.3)
    left.legend(fontsize=7)

    most = max((k[1] for k in loss), default=0)
    for (attack, attackers, clip), points in sorted(loss.items()):
        if attack != "none" and attackers != most:
            continue
        points.sort()
        colour = "black" if attack == "none" else colours[attack]
        label = ("no attack" if attack == "none" else f"{attack} x{attackers}") + (", CenteredClip" if clip else ", mean")
        right.plot([p[0] for p in points], [p[1] for p in points], "--" if clip else "-", color=colour, label=label,
                   linewidth=1)
    right.set_yscale("log")
    right.set_xlabel("optimizer step")
    right.set_ylabel("honest peers' training loss")
    right.set_title(f"training loss with {most} attackers")
    right.grid(True, alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(argv[3], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
