"""The plots of the papers report (papers.py): each headline's figures as
a small PNG, plots/paper-KEY.png, with the paper's number as a dashed
line where it has one and the CPU counts past the host's cores shaded
(matplotlib's Agg back end, as plots.py).  A headline's function builds
its drawing with line_plot or bar_plot; draw() renders it.
"""

import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402


def line_plot(series, ylabel, paper, percent=False, log=False, linear=False,
              xlabel="processors (vCPUs)", cores=None, symlog=False):
    """A drawing function for {label: [(x, y)]}, the paper's number a
    dashed line; None when there is nothing to draw.  percent: y is a
    fraction drawn as a percentage; symlog: a scale for ratios from
    0.001% to 100% (lock miss ratios)."""
    if not any(series.values()):
        return None

    def draw(ax):
        for label, pts in sorted(series.items()):
            if pts:
                ax.plot([p[0] for p in pts], [p[1] * (100 if percent else 1) for p in pts], "-o",
                        markersize=4, label=label)
        xs = sorted({p[0] for pts in series.values() for p in pts})
        if paper is not None:
            ax.axhline(paper * (100 if percent else 1), ls="--", color="0.4",
                       label="paper: %g%s" % (paper * (100 if percent else 1),
                                              "%" if percent else ""))
        if linear:
            ax.plot(xs, xs, ":", color="0.5", label="linear")
        if cores and xs and xs[-1] > cores:
            ax.axvspan(cores + 0.5, xs[-1] + 0.5, color="0.92", zorder=0,
                       label="vCPUs > host's %d cores" % cores)
        if log:
            ax.set_yscale("log")
        elif symlog:
            ax.set_yscale("symlog", linthresh=0.01)
        elif percent:
            ax.set_ylim(bottom=0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel + (" (%)" if percent and "%" not in ylabel else ""))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return draw


def bar_plot(bars, ylabel, scale, paper):
    """A drawing function for [(label, value)] as bars (values times
    scale), the paper's bound a dashed line; None when every value is
    missing."""
    if not any(v is not None for _, v in bars):
        return None

    def draw(ax):
        xs = range(len(bars))
        ax.bar(xs, [(v or 0) * scale for _, v in bars], color="C0")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([b[0] for b in bars], fontsize=6)
        ax.axhline(paper, ls="--", color="0.4", label="paper's SSAC bound")
        ax.set_ylabel(ylabel)
        ax.set_yscale("symlog", linthresh=0.01)
    return draw


def grouped_bars(labels, series, ylabel, ideal):
    """A drawing function for {name: [value per label]} as bars side by
    side per label, the ideal a dashed line; None when every value is
    missing."""
    if not any(v is not None for vals in series.values() for v in vals):
        return None

    def draw(ax):
        width = 0.8 / max(1, len(series))
        for i, (name, vals) in enumerate(sorted(series.items())):
            ax.bar([x + i * width for x in range(len(labels))], [v or 0 for v in vals],
                   width, label=name, color="C%d" % i)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(labels))])
        ax.set_xticklabels(labels, fontsize=7)
        ax.axhline(ideal, ls="--", color="0.4", label="ideal: %g" % ideal)
        ax.set_ylabel(ylabel)
    return draw


def draw(key, section, plotdir):
    """The section's plot as plots/paper-KEY.png; returns its file name
    or None."""
    if section.plot is None:
        return None
    fig, ax = plt.subplots(figsize=(6, 3.6))
    section.plot(ax)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6)
    fig.tight_layout()
    name = "paper-%s.png" % key
    fig.savefig(os.path.join(plotdir, name), dpi=90)
    plt.close(fig)
    return name
