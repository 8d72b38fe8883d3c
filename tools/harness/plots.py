"""The plots of a sweep (PNG, matplotlib's Agg back end, no display).

  metric-...    the workload's figure against CPUs, one line per option
                set (median of the repeats, bars from lowest to highest)
  locks-...     the miss ratio of the top lock classes against CPUs, one
                panel per option set (Tempest only)
  peer-...      a workload both kernels ran, drawn once: Linux and every
                Tempest option set on the same axes, and beneath them the
                ratio Tempest/Linux at each CPU count (the metric- plot of
                such a workload is not drawn: one picture, one scale)
  scaling-...   Sprite's ratios: the elapsed-time ratio T(1)/T(n) (for a
                fixed amount of work per processor, the machine's
                throughput at n over that at 1), or for a time per
                operation the slowdown T(n)/T(1) (Tornado's); and the
                throughput each added processor brings
  figure5-...   kbench=locks: response time of a lock/unlock pair with p
                processors contending, one line per algorithm (Hurricane
                Figure 5, hold time 0)

A point with more vCPUs than the host has cores is drawn hollow, and
that part of the axis shaded and labelled: its timing measures the host,
not the kernel (its lock counts still mean something).
"""

import os
import re
import statistics

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from .macro import SCALED as MACRO_SCALED  # noqa: E402

TOP_CLASSES = 5


def _slug(*parts):
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", "-".join(str(p) for p in parts).replace("=", "+"))


def _ok(rs):
    return [r for r in rs if r["status"] == "ok" and r["value"] is not None]


def _by(records, *fields):
    out = {}
    for r in records:
        out.setdefault(tuple(r["point"][f] for f in fields), []).append(r)
    return out


def _series(rs, value=lambda r: r["value"]):
    """[(cpus, median, low, high, oversubscribed)] over the repeats."""
    out = []
    for cpus, group in sorted(_by(rs, "cpus").items()):
        vals = [value(r) for r in group if value(r) is not None]
        if vals:
            out.append((cpus[0], statistics.median(vals), min(vals), max(vals),
                        any(r["oversubscribed"] for r in group)))
    return out


def _draw(ax, series, label, style="-o", color=None):
    if not series:
        return
    xs = [s[0] for s in series]
    ys = [s[1] for s in series]
    err = [[s[1] - s[2] for s in series], [s[3] - s[1] for s in series]]
    line = ax.errorbar(xs, ys, yerr=err, fmt=style, capsize=3, label=label, markersize=5,
                       color=color)
    color = line[0].get_color()
    over = [(s[0], s[1]) for s in series if s[4]]
    if over:
        ax.plot([o[0] for o in over], [o[1] for o in over], "o", markersize=9,
                markerfacecolor="white", markeredgecolor=color, zorder=3)


def _host_note(ax, records):
    cores = min(r["host"]["cores"] for r in records)
    xmax = max(r["point"]["cpus"] for r in records)
    if xmax > cores:
        ax.axvspan(cores + 0.5, xmax + 0.5, color="0.92", zorder=0)
        ax.text(cores + 0.6, 0.98, "vCPUs > host's %d cores:\ntimings measure the host" % cores,
                transform=ax.get_xaxis_transform(), va="top", fontsize=7, color="0.35")


def _finish(fig, ax, path, title, ylabel, xlabel="processors (vCPUs)"):
    ax.set_title(title, fontsize=9)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _beside_linux(records):
    """The (machine, accel, workload) that both Tempest and Linux ran: they
    are drawn once, in the peer plot, on one pair of axes."""
    kernels = {}
    for r in _ok(records):
        p = r["point"]
        kernels.setdefault((p["machine"], p["accel"], p["workload"]), set()).add(
            "linux" if p["kernel"] == "linux" else "tempest")
    return {k for k, v in kernels.items() if v == {"tempest", "linux"}}


def _metric_plots(records, outdir, made):
    both = _beside_linux(records)
    for (kernel, machine, accel, workload), rs in sorted(
            _by(records, "kernel", "machine", "accel", "workload").items()):
        ok = _ok(rs)
        if not ok or (machine, accel, workload) in both:
            continue
        fig, ax = plt.subplots(figsize=(6, 3.8))
        for optset, group in sorted(_by(ok, "optset").items()):
            _draw(ax, _series(group), optset[0])
        _host_note(ax, ok)
        name = _slug("metric", workload, kernel, machine, accel) + ".png"
        _finish(fig, ax, os.path.join(outdir, name),
                "%s on %s (%s, %s)" % (workload, kernel, machine, accel),
                "%s (%s)" % (ok[0]["metric"], ok[0]["unit"]))
        made.append(("workloads", name, "%s: %s against CPUs on %s %s under %s, one line per "
                     "option set" % (workload, ok[0]["metric"], kernel, machine, accel)))


def _top_classes(records):
    """The TOP_CLASSES lock classes with the most misses over records."""
    misses = {}
    for r in records:
        for c in (r["lockstat"] or {}).get("classes", []):
            misses[c["class"]] = misses.get(c["class"], 0) + c.get("misses", 0)
    return [c for c, m in sorted(misses.items(), key=lambda kv: -kv[1]) if m > 0][:TOP_CLASSES]


def _lock_plots(records, outdir, made):
    tempest = [r for r in _ok(records) if r["point"]["kernel"] == "tempest" and r.get("lockstat")]
    for (machine, accel, workload), rs in sorted(_by(tempest, "machine", "accel", "workload").items()):
        optsets = sorted(_by(rs, "optset").items())[:6]
        cols = min(2, len(optsets))
        rows = -(-len(optsets) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
        for ax in axes.flat[len(optsets):]:
            ax.set_visible(False)
        colors = {}                     # one colour per class in every panel
        for ax, ((optset,), group) in zip(axes.flat, optsets):
            top = _top_classes(group)
            for cls in top:
                colors.setdefault(cls, "C%d" % (len(colors) % 10))
                def ratio(r, cls=cls):
                    for c in (r["lockstat"] or {}).get("classes", []):
                        if c["class"] == cls:
                            return 100.0 * c.get("miss_ratio", 0)
                    return 0.0
                _draw(ax, _series(group, ratio), cls, color=colors[cls])
            if not top:
                ax.text(0.5, 0.5, "no lock missed", transform=ax.transAxes, ha="center")
            _host_note(ax, group)
            ax.set_title(optset, fontsize=8)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel("processors (vCPUs)")
            ax.set_ylabel("miss ratio (%)")
            ax.grid(True, alpha=0.3)
            if top:
                ax.legend(fontsize=6)
        fig.suptitle("top lock classes: %s on %s (%s)" % (workload, machine, accel), fontsize=9)
        fig.tight_layout()
        name = _slug("locks", workload, machine, accel) + ".png"
        fig.savefig(os.path.join(outdir, name), dpi=90)
        plt.close(fig)
        made.append(("locks", name, "%s on %s (%s): miss ratio of the %d lock classes with the "
                     "most misses, per option set" % (workload, machine, accel, TOP_CLASSES)))


def _peer_plots(records, outdir, made):
    """Each workload both kernels ran, once: Linux and every Tempest option
    set on the same axes, and beneath them Tempest's median over Linux's at
    each CPU count (above 1 is more of the figure, better or worse as the
    metric says)."""
    both = _beside_linux(records)
    for (machine, accel, workload), rs in sorted(_by(_ok(records), "machine", "accel", "workload").items()):
        if (machine, accel, workload) not in both:
            continue
        fig, (ax, rx) = plt.subplots(2, 1, figsize=(6, 5.2), sharex=True,
                                     gridspec_kw={"height_ratios": [3, 1.4]})
        linux = _series([r for r in rs if r["point"]["kernel"] == "linux"])
        base = {x[0]: x[1] for x in linux}
        for (kernel, optset), group in sorted(_by(rs, "kernel", "optset").items()):
            if kernel == "linux":
                _draw(ax, linux, "Linux", "-s", color="k")
                continue
            label = "%s %s" % (kernel.capitalize(), optset)
            series = _series(group)
            _draw(ax, series, label, "-o")
            ratio = [(x[0], x[1] / base[x[0]], x[2] / base[x[0]], x[3] / base[x[0]], x[4])
                     for x in series if base.get(x[0])]
            _draw(rx, ratio, label, "-o")
        _host_note(ax, rs)
        rx.axhline(1.0, color="k", linewidth=0.8, linestyle=":")
        better = "higher" if rs[0]["higher_is_better"] else "lower"
        rx.set_ylabel("Tempest / Linux\n(%s is better)" % better, fontsize=7)
        rx.grid(True, alpha=0.3)
        ax.set_xlabel("")
        rx.set_xlabel("processors (vCPUs)")
        name = _slug("peer", workload, machine, accel) + ".png"
        _finish(fig, ax, os.path.join(outdir, name), "Tempest and Linux: %s on %s (%s)"
                % (workload, machine, accel), "%s (%s)" % (rs[0]["metric"], rs[0]["unit"]),
                xlabel="")
        made.append(("peer", name, "%s on %s under %s: Linux and every Tempest option set on "
                     "the same axes, Tempest over Linux beneath" % (workload, machine, accel)))


def _whole_runs(r):
    """A macro workload whose figure is the elapsed time of its whole work
    (pmake: one fixed make; pmakeind: one make per CPU), not a time per
    operation."""
    return not r["higher_is_better"] and r["point"]["workload"] in MACRO_SCALED


def _throughput(r):
    """The machine's operations per second for a record (for pmake and
    pmakeind, makes per second: Sprite's throughput)."""
    v = r["value"]
    if r["higher_is_better"]:
        return v
    if _whole_runs(r):
        work = r["point"]["cpus"] if MACRO_SCALED[r["point"]["workload"]] else 1
        return work / v if v else None
    return r["point"]["cpus"] * 1e6 / v if v else None


def _scaling_plots(records, outdir, made):
    for (kernel, machine, accel, workload), rs in sorted(
            _by(_ok(records), "kernel", "machine", "accel", "workload").items()):
        if workload in ("locks", "lockcurve") or len({r["point"]["cpus"] for r in rs}) < 2 \
                or 1 not in {r["point"]["cpus"] for r in rs}:
            continue
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
        slow = not rs[0]["higher_is_better"] and not _whole_runs(rs[0])
        for (optset,), group in sorted(_by(rs, "optset").items()):
            s = _series(group, _throughput)
            base = [x for x in s if x[0] == 1]
            if not base:
                continue
            b = base[0][1]
            if slow:
                lat = _series(group)
                b1 = [x for x in lat if x[0] == 1][0][1]
                ratio = [(x[0], x[1] / b1, x[2] / b1, x[3] / b1, x[4]) for x in lat]
            else:
                ratio = [(x[0], x[1] / b, x[2] / b, x[3] / b, x[4]) for x in s]
            _draw(a1, ratio, optset)
            inc = []
            for prev, cur in zip(s, s[1:]):
                added = (cur[1] - prev[1]) / (cur[0] - prev[0])
                inc.append((cur[0], added, added, added, cur[4]))
            _draw(a2, [(1, b, b, b, base[0][4])] + inc, optset)
        for ax in (a1, a2):
            _host_note(ax, rs)
        if not slow:
            xs = sorted({r["point"]["cpus"] for r in rs})
            a1.plot(xs, xs, ":", color="0.5", label="linear")
        a1.set_title("slowdown T(n)/T(1) per operation" if slow else
                     "elapsed-time ratio T(1)/T(n) (= throughput ratio)", fontsize=9)
        a1.set_xlabel("processors (vCPUs)")
        a1.xaxis.set_major_locator(MaxNLocator(integer=True))
        fig.suptitle("%s on %s %s (%s)" % (workload, kernel, machine, accel), fontsize=9)
        a1.set_ylabel("ratio")
        a1.grid(True, alpha=0.3)
        a1.legend(fontsize=7)
        name = _slug("scaling", workload, kernel, machine, accel) + ".png"
        _finish(fig, a2, os.path.join(outdir, name),
                "throughput added per processor", "ops/s per added processor")
        made.append(("scaling", name, "%s on %s %s (%s): Sprite's elapsed-time ratio (or the "
                     "slowdown) and the incremental throughput per processor"
                     % (workload, kernel, machine, accel)))


def _figure5(records, outdir, made):
    curves = [r for r in _ok(records) if r["point"]["workload"] in ("locks", "lockcurve")]
    for (machine, accel, workload), rs in sorted(_by(curves, "machine", "accel", "workload").items()):
        fig, ax = plt.subplots(figsize=(6, 3.8))
        variants = sorted({v for r in rs for v in (r["result"].get("variants") or {})})
        for variant in variants:
            def resp(r, variant=variant):
                v = (r["result"].get("variants") or {}).get(variant) or {}
                return v.get("response_us")
            _draw(ax, _series(rs, resp), variant.replace("/hold", ", hold ") +
                  (" us" if "/hold" in variant else ""), "--o" if variant.endswith("/hold0") else "-o")
        _host_note(ax, rs)
        ax.set_yscale("log")
        name = _slug("figure5", workload, machine, accel) + ".png"
        _finish(fig, ax, os.path.join(outdir, name),
                "lock/unlock response time, p processors contending (%s, %s, %s)"
                % (workload, machine, accel), "us per pair (log)")
        made.append(("locks", name, "Hurricane Figure 5 from kbench=%s on %s (%s): response "
                     "time of a lock/unlock pair against contending processors, per algorithm%s"
                     % (workload, machine, accel,
                        " and hold time" if workload == "lockcurve" else " (hold time 0)")))


def make_all(records, outdir):
    """Draw every plot the records allow into outdir/plots; returns
    [(section, file name, caption)]."""
    pdir = os.path.join(outdir, "plots")
    os.makedirs(pdir, exist_ok=True)
    for old in os.listdir(pdir):
        if old.endswith(".png"):
            os.remove(os.path.join(pdir, old))
    made = []
    for fn in (_metric_plots, _figure5, _lock_plots, _peer_plots, _scaling_plots):
        fn(records, pdir, made)
    return made

