#!/usr/bin/env python3
"""Plots and a self-contained HTML report for sweeps and comparisons.

    sweep_report.py --sweep DIR [--sweep DIR2] [--compare CMP_DIR] --out OUT_DIR

Reads what `swarmlab sweep` writes (sweep.json, results.csv) and what `swarmlab compare` writes
(compare.json, compare.csv); writes PNG files into OUT_DIR and OUT_DIR/report.html, which embeds
every image (base64) and the tables, so it can be mailed or archived as one file.

Sweep plots (primary metric): the metric against each axis (coloured by the crossed categorical
axis, e.g. the strategy, when there is one) and heatmaps of its mean over pairs of numeric axes.
Comparison plots: the distribution of the per-composition change, every composition's change
with its 95% confidence interval, the change against each numeric axis, and heatmaps of the mean
change over pairs of axes.

Exits 3 when matplotlib is missing, so the caller can report the plots as skipped.
"""
import argparse
import base64
import csv
import html
import itertools
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm
except ImportError:
    sys.exit(3)

MAX_HEATMAPS = 6
MAX_BINS = 6


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def number(text):
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


class Sweep:
    def __init__(self, folder):
        self.dir = folder
        with open(os.path.join(folder, "sweep.json"), encoding="utf-8") as f:
            self.meta = json.load(f)
        self.header, self.rows = read_csv(os.path.join(folder, "results.csv"))
        self.col = {name: i for i, name in enumerate(self.header)}
        self.axes = self.meta["axes"]
        self.metric = self.meta["primary_metric"]
        self.better = next(m for m in self.meta["metrics"] if m["name"] == self.metric)

    def ok_rows(self):
        return [r for r in self.rows if r[self.col["status"]] == "ok" and number(r[self.col[self.metric]]) is not None]

    def colour_axis(self):
        """The categorical crossed axis runs are coloured by (the compared setting), if any."""
        for a in self.axes:
            if a["kind"] == "categorical" and a["crossed"]:
                return a["name"]
        return None


def bins_of(values, max_bins=MAX_BINS):
    """Bin edges for a numeric axis: its levels when few, else quantile bins."""
    distinct = sorted(set(values))
    if len(distinct) <= max_bins + 2:
        return distinct, None
    qs = [distinct[0]]
    ordered = sorted(values)
    for k in range(1, max_bins):
        qs.append(ordered[int(k * len(ordered) / max_bins)])
    qs.append(distinct[-1])
    edges = sorted(set(qs))
    return None, edges


def bin_index(x, levels, edges):
    if levels is not None:
        return levels.index(x)
    for i in range(len(edges) - 1):
        if x <= edges[i + 1] or i == len(edges) - 2:
            return i
    return len(edges) - 2


def bin_labels(levels, edges):
    if levels is not None:
        return [f"{v:g}" for v in levels]
    return [f"{edges[i]:.3g}-{edges[i + 1]:.3g}" for i in range(len(edges) - 1)]


def save(fig, out_dir, name, images, caption):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    images.append((name, caption))


def plot_metric_vs_axes(sweep, out_dir, prefix, images):
    rows = sweep.ok_rows()
    if not rows:
        return
    colour = sweep.colour_axis()
    groups = sorted({r[sweep.col[colour]] for r in rows}) if colour else [None]
    y_of = lambda r: number(r[sweep.col[sweep.metric]])
    for axis in sweep.axes:
        name = axis["name"]
        fig, ax = plt.subplots(figsize=(6, 4))
        if axis["kind"] == "numeric":
            for g in groups:
                sel = [r for r in rows if g is None or r[sweep.col[colour]] == g]
                xs = [number(r[sweep.col[name]]) for r in sel]
                ys = [y_of(r) for r in sel]
                pts = ax.scatter(xs, ys, s=10, alpha=0.35, label=f"{colour}={g}" if g else None)
                levels, edges = bins_of(xs)
                means = {}
                for x, y in zip(xs, ys):
                    means.setdefault(bin_index(x, levels, edges), []).append((x, y))
                line = sorted((sum(p[0] for p in v) / len(v), sum(p[1] for p in v) / len(v)) for v in means.values())
                ax.plot([p[0] for p in line], [p[1] for p in line], "-", color=pts.get_facecolor()[0][:3], lw=2)
            if axis.get("log_scale"):
                ax.set_xscale("log")
        else:
            levels = []
            for r in rows:
                if r[sweep.col[name]] not in levels:
                    levels.append(r[sweep.col[name]])
            sub = groups if colour and colour != name else [None]
            width = 0.8 / len(sub)
            for k, g in enumerate(sub):
                data = [[y_of(r) for r in rows if r[sweep.col[name]] == lv and (g is None or r[sweep.col[colour]] == g)]
                        for lv in levels]
                pos = [i + (k - (len(sub) - 1) / 2) * width for i in range(len(levels))]
                bp = ax.boxplot([d if d else [float("nan")] for d in data], positions=pos, widths=width * 0.9,
                                patch_artist=True, manage_ticks=False)
                colour_k = f"C{k}"
                for patch in bp["boxes"]:
                    patch.set_facecolor(colour_k)
                    patch.set_alpha(0.5)
                if g is not None:
                    ax.plot([], [], "s", color=colour_k, label=f"{colour}={g}")
            ax.set_xticks(range(len(levels)))
            ax.set_xticklabels(levels)
        ax.set_xlabel(name)
        ax.set_ylabel(sweep.metric)
        ax.set_title(f"{sweep.meta['name']}: {sweep.metric} against {name}")
        ax.grid(True, alpha=0.3)
        if colour and (axis["kind"] == "numeric" or colour != name):
            ax.legend(fontsize=8)
        save(fig, out_dir, f"{prefix}metric_vs_{name}.png", images,
             f"{sweep.metric} ({'higher' if sweep.better['higher_is_better'] else 'lower'} is better) against {name}: "
             "runs as points, bin means as lines")


def heatmap(ax, xs, ys, zs, x_name, y_name, title, diverging):
    xl, xe = bins_of(xs)
    yl, ye = bins_of(ys)
    nx = len(xl) if xl is not None else len(xe) - 1
    ny = len(yl) if yl is not None else len(ye) - 1
    sums = [[0.0] * nx for _ in range(ny)]
    counts = [[0] * nx for _ in range(ny)]
    for x, y, z in zip(xs, ys, zs):
        i, j = bin_index(x, xl, xe), bin_index(y, yl, ye)
        sums[j][i] += z
        counts[j][i] += 1
    grid = [[sums[j][i] / counts[j][i] if counts[j][i] else float("nan") for i in range(nx)] for j in range(ny)]
    finite = [v for row in grid for v in row if math.isfinite(v)]
    if not finite:
        return None
    kwargs = {}
    if diverging:
        bound = max(abs(v) for v in finite) or 1.0
        kwargs["norm"] = TwoSlopeNorm(vcenter=0.0, vmin=-bound, vmax=bound)
        kwargs["cmap"] = "RdBu_r"
    else:
        kwargs["cmap"] = "viridis"
    im = ax.imshow(grid, origin="lower", aspect="auto", **kwargs)
    for j in range(ny):
        for i in range(nx):
            if math.isfinite(grid[j][i]):
                ax.text(i, j, f"{grid[j][i]:.3g}", ha="center", va="center", fontsize=7, color="black",
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", alpha=0.5, lw=0))
    ax.set_xticks(range(nx))
    ax.set_xticklabels(bin_labels(xl, xe), rotation=30, fontsize=7)
    ax.set_yticks(range(ny))
    ax.set_yticklabels(bin_labels(yl, ye), fontsize=7)
    ax.set_xlabel(x_name)
    ax.set_ylabel(y_name)
    ax.set_title(title, fontsize=9)
    return im


def plot_sweep_heatmaps(sweep, out_dir, prefix, images):
    rows = sweep.ok_rows()
    numeric = [a["name"] for a in sweep.axes if a["kind"] == "numeric"]
    if not rows or len(numeric) < 2:
        return
    colour = sweep.colour_axis()
    groups = sorted({r[sweep.col[colour]] for r in rows}) if colour else [None]
    for xa, ya in list(itertools.combinations(numeric, 2))[:MAX_HEATMAPS]:
        fig, axs = plt.subplots(1, len(groups), figsize=(5 * len(groups), 4), squeeze=False)
        for k, g in enumerate(groups):
            sel = [r for r in rows if g is None or r[sweep.col[colour]] == g]
            im = heatmap(axs[0][k], [number(r[sweep.col[xa]]) for r in sel], [number(r[sweep.col[ya]]) for r in sel],
                         [number(r[sweep.col[sweep.metric]]) for r in sel], xa, ya,
                         f"mean {sweep.metric}" + (f", {colour}={g}" if g else ""), False)
            if im is not None:
                fig.colorbar(im, ax=axs[0][k])
        save(fig, out_dir, f"{prefix}heatmap_{xa}_{ya}.png", images,
             f"mean {sweep.metric} over {xa} and {ya}" + (f", one panel per {colour}" if colour else ""))


def plot_comparison(cmp_dir, out_dir, images, numeric_axes):
    with open(os.path.join(cmp_dir, "compare.json"), encoding="utf-8") as f:
        summary = json.load(f)
    header, rows = read_csv(os.path.join(cmp_dir, "compare.csv"))
    col = {n: i for i, n in enumerate(header)}
    if not rows:
        return summary, header, rows
    change = [100 * number(r[col["change"]]) for r in rows]
    better = "higher" if summary["higher_is_better"] else "lower"
    label = f"change in {summary['metric']} (%), {summary['candidate']} vs {summary['baseline']}"

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(change, bins=min(40, max(5, len(change) // 5)), color="C0", alpha=0.8)
    ax.axvline(0, color="black", lw=1)
    ax.axvline(100 * summary["median_change"], color="C3", lw=1.5, ls="--", label="median")
    ax.set_xlabel(label)
    ax.set_ylabel("compositions")
    ax.set_title(f"helps in {100 * summary['share_helps']:.1f}% of {summary['compositions']} compositions")
    ax.legend()
    save(fig, out_dir, "compare_distribution.png", images,
         f"distribution of the per-composition mean change ({better} {summary['metric']} is better)")

    order = sorted(range(len(rows)), key=lambda i: change[i])
    lo = [number(rows[i][col["ci_low"]]) for i in order]
    hi = [number(rows[i][col["ci_high"]]) for i in order]
    fig, ax = plt.subplots(figsize=(7, 4))
    helps = [rows[i][col["helps"]] == "true" for i in order]
    xs = list(range(len(order)))
    ys = [change[i] for i in order]
    err_lo = [y - 100 * l if l is not None else 0 for y, l in zip(ys, lo)]
    err_hi = [100 * h - y if h is not None else 0 for y, h in zip(ys, hi)]
    ax.errorbar(xs, ys, yerr=[err_lo, err_hi], fmt="none", ecolor="0.7", lw=0.8)
    ax.scatter(xs, ys, s=8, c=["C2" if h else "C3" for h in helps])
    ax.axhline(0, color="black", lw=1)
    ax.set_xlabel("compositions, sorted by change")
    ax.set_ylabel(label.split(",")[0])
    ax.set_title("per composition: mean change and 95% CI (green helps, red hurts)")
    save(fig, out_dir, "compare_sorted.png", images, "each composition's mean change over seeds with its 95% confidence interval")

    axes = [a for a in summary["key_axes"] if a in numeric_axes]
    if axes:
        n = len(axes)
        cols = min(3, n)
        fig, axs = plt.subplots((n + cols - 1) // cols, cols, figsize=(4.5 * cols, 3.5 * ((n + cols - 1) // cols)), squeeze=False)
        for k, a in enumerate(axes):
            ax = axs[k // cols][k % cols]
            ax.scatter([number(r[col[a]]) for r in rows], change, s=8, alpha=0.6,
                       c=["C2" if r[col["helps"]] == "true" else "C3" for r in rows])
            ax.axhline(0, color="black", lw=1)
            ax.set_xlabel(a)
            ax.set_ylabel("change (%)")
            ax.grid(True, alpha=0.3)
        for k in range(n, len(axs) * cols):
            axs[k // cols][k % cols].axis("off")
        save(fig, out_dir, "compare_vs_axes.png", images, "the change against each numeric axis")
        for xa, ya in list(itertools.combinations(axes, 2))[:MAX_HEATMAPS]:
            fig, ax = plt.subplots(figsize=(5.5, 4))
            im = heatmap(ax, [number(r[col[xa]]) for r in rows], [number(r[col[ya]]) for r in rows], change, xa, ya,
                         "mean change (%)", True)
            if im is not None:
                fig.colorbar(im, ax=ax)
            save(fig, out_dir, f"compare_heatmap_{xa}_{ya}.png", images,
                 f"mean change over {xa} and {ya} (blue: {summary['metric']} falls, red: it rises)")
    return summary, header, rows


def table_html(header, rows, limit=None):
    shown = rows if limit is None else rows[:limit]
    out = ["<table><thead><tr>", "".join(f"<th>{html.escape(h)}</th>" for h in header), "</tr></thead><tbody>"]
    for r in shown:
        out.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    if limit is not None and len(rows) > limit:
        out.append(f"<p>{len(rows) - limit} more rows in the CSV.</p>")
    return "".join(out)


def image_html(out_dir, name, caption):
    with open(os.path.join(out_dir, name), "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return (f'<figure><img class="plot" alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.5em; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; border: 1px solid #ddd; padding: 0.5em; background: #fff; }
figure img { max-width: 560px; height: auto; display: block; }
figcaption { font-size: 0.8em; color: #555; max-width: 560px; }
table { border-collapse: collapse; font-size: 0.75em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #f0f0f0; position: sticky; top: 0; }
.summary td { text-align: left; font-size: 1.1em; }
#plot-status { color: #555; font-size: 0.85em; }
"""

# Reports whether every embedded plot decoded: a broken image shows as a count short of the total.
SCRIPT = """
window.addEventListener('load', function () {
  var images = document.querySelectorAll('img.plot');
  var shown = 0;
  images.forEach(function (img) {
    var ok = img.complete && img.naturalWidth > 0;
    img.setAttribute('data-displayed', ok ? 'yes' : 'no');
    if (ok) shown++;
  });
  document.getElementById('plot-status').textContent = shown + ' of ' + images.length + ' plots displayed';
  document.body.setAttribute('data-plots-displayed', shown + '/' + images.length);
});
"""


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sweep", action="append", default=[], help="a sweep's output folder (repeatable)")
    p.add_argument("--compare", help="a comparison's folder (compare.json, compare.csv)")
    p.add_argument("--out", required=True, help="folder for the PNG files and report.html")
    p.add_argument("--table-rows", type=int, default=2000, help="rows of each table shown in the HTML")
    a = p.parse_args(argv[1:])
    if not a.sweep and not a.compare:
        p.error("expected --sweep or --compare")
    os.makedirs(a.out, exist_ok=True)
    sweeps = [Sweep(d) for d in a.sweep]
    sections = []
    title = "swarmlab report"
    numeric_axes = set()
    for k, s in enumerate(sweeps):
        numeric_axes.update(x["name"] for x in s.axes if x["kind"] == "numeric")

    if a.compare:
        images = []
        summary, header, rows = plot_comparison(a.compare, a.out, images, numeric_axes)
        title = f"{summary['candidate']} against {summary['baseline']}: {summary['metric']}"
        pct = lambda x: "n/a" if x is None else f"{100 * x:+.1f}%"
        facts = [("metric", f"{summary['metric']} ({'higher' if summary['higher_is_better'] else 'lower'} is better)"),
                 ("compositions compared", str(summary["compositions"])),
                 ("without a pair of ok runs", str(summary["unpaired"])),
                 ("change helps in", f"{100 * summary['share_helps']:.1f}% of compositions"),
                 ("helps significantly (95% CI excludes 0)", f"{100 * summary['share_helps_significantly']:.1f}%"),
                 ("hurts significantly", f"{100 * summary['share_hurts_significantly']:.1f}%"),
                 ("median change", pct(summary["median_change"]))]
        for which in ("worst", "best"):
            if which in summary:
                w = summary[which]
                where = ", ".join(f"{k}={v}" for k, v in w["axes"].items())
                facts.append((f"{which} case", f"{pct(w['change'])} [95% CI {pct(w['ci_low'])} .. {pct(w['ci_high'])}] at {where}"))
        body = ['<table class="summary">'] + [f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in facts]
        body.append("</table>")
        body.append('<div class="plots">' + "".join(image_html(a.out, n, c) for n, c in images) + "</div>")
        body.append("<h3>Per composition</h3>" + table_html(header, rows, a.table_rows))
        sections.append(("Comparison", "".join(body)))

    for k, s in enumerate(sweeps):
        images = []
        prefix = f"sweep{k}_" if len(sweeps) > 1 else "sweep_"
        plot_metric_vs_axes(s, a.out, prefix, images)
        plot_sweep_heatmaps(s, a.out, prefix, images)
        m = s.meta
        facts = (f"{m['experiment']} experiment on the {m['backend']} backend; {m['runs']} runs = {m['compositions']} "
                 f"compositions x {len(m['seeds'])} seeds ({m['sampling']['method']} sampling); {m['ok']} ok, {m['failed']} failed")
        body = [f"<p>{html.escape(m.get('description') or '')}</p><p>{html.escape(facts)}</p>"]
        body.append('<div class="plots">' + "".join(image_html(a.out, n, c) for n, c in images) + "</div>")
        body.append(f"<details><summary>results.csv ({len(s.rows)} runs)</summary>" + table_html(s.header, s.rows, a.table_rows) + "</details>")
        sections.append((f"Sweep {m['name']}", "".join(body)))
        if not a.compare:
            title = f"sweep {m['name']}"

    page = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{html.escape(title)}</title>",
            f"<style>{STYLE}</style></head><body>", f"<h1>{html.escape(title)}</h1>",
            '<p id="plot-status">plots not checked (JavaScript is off)</p>']
    for heading, body in sections:
        page.append(f"<h2>{html.escape(heading)}</h2>{body}")
    page.append(f"<script>{SCRIPT}</script></body></html>")
    with open(os.path.join(a.out, "report.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(page) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
