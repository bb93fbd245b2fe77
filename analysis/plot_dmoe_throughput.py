#!/usr/bin/env python3
"""Learning@home throughput: plot_dmoe_throughput.py THROUGHPUT_CSV OUT.png

Input is `swarmlab dmoe throughput --out DIR`'s dmoe_throughput.csv (block, mean_delay_ms, method,
samples_per_s). One panel per block type: samples per second against the mean delay after each
block for asynchronous DMoE, model-parallel training and pipelined model-parallel training without
delay (the upper bound, a flat line). Exits 3 when matplotlib is missing so the caller can skip the
plot with a message.
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

LABELS = {"dmoe": "DMoE (asynchronous trainers)", "model-parallel": "model-parallel",
          "pipelined-no-delay": "pipelined model-parallel, no delay"}
STYLES = {"dmoe": "o-", "model-parallel": "s-", "pipelined-no-delay": "k--"}


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    series = defaultdict(list)  # (block, method) -> [(delay, throughput)]
    blocks = []
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            if row["block"] not in blocks:
                blocks.append(row["block"])
            series[(row["block"], row["method"])].append((float(row["mean_delay_ms"]), float(row["samples_per_s"])))
    fig, axes = plt.subplots(1, len(blocks), figsize=(6.5 * len(blocks), 4.5), squeeze=False)
    for ax, block in zip(axes[0], blocks):
        for method in ("pipelined-no-delay", "dmoe", "model-parallel"):
            points = sorted(series.get((block, method), []))
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], STYLES[method], label=LABELS[method])
        ax.set_title(f"{block} blocks")
        ax.set_xlabel("mean delay after each block (ms)")
        ax.set_ylabel("samples per second" if block == "feed-forward" else "sequences per second")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
