"""The report of a sweep: one static HTML page (report.html beside the
records) with the plots, the summary table, the top lock classes of each
point and the failed runs with their logs.  No server and nothing fetched:
the images are files next to the page.  The papers sweep's page opens
with each paper's headline beside this sweep's figures (papers.py).

A small script at the end of the page counts the images that loaded
(complete, with a width) and writes "N of M plots loaded" into the
element with id "plots-loaded", so a headless browser's dump of the page
tells whether every plot was there (tests/bench_check.py).
"""

import html
import os
import time

from . import papers as paper_figures
from . import records as rec

STYLE = """
body { font-family: sans-serif; margin: 1.5em; max-width: 1200px; color: #222; }
table { border-collapse: collapse; font-size: 12px; margin-bottom: 1em; }
td, th { border: 1px solid #bbb; padding: 2px 6px; text-align: right; }
th { background: #eee; } td.l, th.l { text-align: left; }
tr.over td { color: #888; } tr.failed td { background: #fee; }
tr.busy td { color: #999; background: #f2f2f2; }
.note { background: #ffd; border: 1px solid #dd9; padding: 0.5em 1em; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figcaption { font-size: 12px; max-width: 560px; }
img.plot { max-width: 100%; }
p.verdict { max-width: 900px; }
"""

SCRIPT = """
<script>
window.addEventListener("load", function () {
  var imgs = document.querySelectorAll("img.plot"), ok = 0;
  for (var i = 0; i < imgs.length; i++)
    if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.getElementById("plots-loaded").textContent =
    ok + " of " + imgs.length + " plots loaded";
});
</script>
"""


def _e(x):
    return html.escape("" if x is None else str(x))


def _num(v):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return "%.4g" % v
    return str(v)


def _table(headers, rows, row_class=None):
    out = ["<table><tr>" + "".join('<th class="l">%s</th>' % _e(h) if i < 1 else "<th>%s</th>" % _e(h)
                                   for i, h in enumerate(headers)) + "</tr>"]
    for i, row in enumerate(rows):
        cls = row_class(i) if row_class else ""
        out.append("<tr%s>" % (' class="%s"' % cls if cls else "") + "".join(
            '<td class="l">%s</td>' % c if j < 6 else "<td>%s</td>" % c
            for j, c in enumerate(row)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _summary(rows):
    headers = ["kernel", "machine", "cpus", "options", "workload", "accel", "metric", "median",
               "min", "max", "spread", "vs 1 cpu", "runs", "failed", "busy"]
    cells = [[_e(r["kernel"]), _e(r["machine"]), _e(r["cpus"]), _e(r["optset"]),
              _e(r["workload"]), _e(r["accel"]), _e("%s (%s)" % (r["metric"], r["unit"])),
              _num(r["median"]), _num(r["min"]), _num(r["max"]),
              _num(r["spread"] * 100) + "%" if r["spread"] is not None else "",
              _num(r["vs_1cpu"]), _e(r["runs"]), _e(r["failed"]), _e(r.get("busy", 0))]
             for r in rows]
    return _table(headers, cells, lambda i: "failed" if rows[i]["failed"] else
                  "busy" if rows[i].get("busy") else
                  "over" if rows[i]["oversubscribed"] else "")


def _busy(records):
    """The points taken on a busy host, with the reason (greyed)."""
    busy = [r for r in records if r.get("busy")]
    if not busy:
        return "<p>Every point was taken with no other emulator on the host.</p>"
    return _table(["point", "why it is not quiet"],
                  [[_e(r["id"]), _e(r["busy"])] for r in busy], lambda i: "busy")


def _locks(records):
    """The top lock classes of each Tempest point (its first good repeat)."""
    seen, rows = set(), []
    for r in records:
        key = rec.group_key(r)
        if r["status"] != "ok" or not r.get("lockstat") or key in seen:
            continue
        seen.add(key)
        p = r["point"]
        top = rec.top_locks(r)
        rows.append([_e(p["machine"]), _e(p["cpus"]), _e(p["optset"]), _e(p["workload"]),
                     _e(p["accel"]), _e(p["kernel"]),
                     "<br>".join("%s: %d hits, %d misses (%.2f%%), wait %.0f us" % (
                         _e(c["class"]), c["hits"], c["misses"], 100 * c["miss_ratio"],
                         c["wait_us"]) for c in top) or "none missed"])
    if not rows:
        return "<p>No lock statistics (Linux points and kernel workloads have none).</p>"
    return _table(["machine", "cpus", "options", "workload", "accel", "kernel",
                   "top lock classes by misses"], rows)


def _lockbench(records):
    """kbench=locks and lockcurve: every algorithm's figures per point (the
    first good repeat)."""
    rows, seen = [], set()
    for r in records:
        p = r["point"]
        key = rec.group_key(r)
        if r["status"] != "ok" or p["workload"] not in ("locks", "lockcurve") or key in seen:
            continue
        seen.add(key)
        for variant, f in sorted((r["result"].get("variants") or {}).items()):
            rows.append([_e(p["machine"]), _e(p["cpus"]), _e(p["accel"]), _e(p["workload"]),
                         _e(variant), _num(f.get("uncontended_off_cycles")),
                         _num(f.get("uncontended_on_cycles")),
                         _num(f.get("contended_ops") or f.get("pairs")), _num(f.get("response_us"))])
    if not rows:
        return ""
    return "<h2>In-kernel lock benchmarks</h2>" + _table(
        ["machine", "cpus", "accel", "benchmark", "algorithm", "uncontended cycles (stats off)",
         "uncontended cycles (stats on)", "contended pairs/s (locks) or pairs (lockcurve)",
         "response us per pair"], rows)


def _failures(records):
    bad = [r for r in records if r["status"] != "ok"]
    if not bad:
        return "<p>Every run succeeded.</p>"
    return _table(["point", "reason", "console"], [
        [_e(r["id"]), _e(r["reason"]), '<a href="%s">log</a>' % _e(r["log"])] for r in bad])


def write(outdir, sweep_name, records, summary, plots, papers_section=False):
    """Write report.html; returns its path.  papers_section: open with each
    paper's headline (papers.py), as a sweep named papers* always does."""
    cores = sorted({r["host"]["cores"] for r in records})
    hosts = sorted({r["host"]["name"] for r in records})
    accels = sorted({r["point"]["accel"] for r in records})
    over = sum(r["oversubscribed"] for r in records)
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Sweep %s</title>"
             "<style>%s</style></head><body>" % (_e(sweep_name), STYLE),
             "<h1>Sweep %s</h1>" % _e(sweep_name),
             "<p>%d runs (%d failed) on %s; host cores %s; accelerators %s. Written %s.</p>" % (
                 len(records), sum(r["status"] != "ok" for r in records),
                 _e(", ".join(hosts)), _e(", ".join(map(str, cores))), _e(", ".join(accels)),
                 time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
             "<p class='note'>Read the timings as ratios within this sweep. Under an emulator "
             "(TCG) there is no NUMA latency, and no speed-up beyond the host's own cores: "
             "%d runs had more vCPUs than their host's cores; they are greyed in the table, "
             "drawn hollow in the plots, and their throughput measures the host, not the "
             "kernel (their lock counts still mean something).</p>" % over,
             "<p id='plots-loaded'>plots not checked (scripts off)</p>"]
    if papers_section or paper_figures.is_papers(sweep_name):
        parts.append(paper_figures.html_section(records, outdir))
    sections = [("workloads", "Workloads against processors"), ("scaling", "Sprite's ratios"),
                ("peer", "Tempest beside Linux"), ("locks", "Locks")]
    for key, title in sections:
        mine = [p for p in plots if p[0] == key]
        if not mine:
            continue
        parts.append("<h2>%s</h2>" % _e(title))
        for _, name, caption in mine:
            parts.append("<figure><img class='plot' src='plots/%s' alt='%s'><figcaption>%s"
                         "</figcaption></figure>" % (_e(name), _e(caption), _e(caption)))
    parts += ["<h2>Summary (medians over repeats)</h2>", _summary(summary),
              "<p>Every run: <a href='results.csv'>results.csv</a>; these rows: "
              "<a href='summary.csv'>summary.csv</a>; one JSON record per run under "
              "<code>runs/</code>.</p>",
              _lockbench(records),
              "<h2>Top lock classes per point</h2>", _locks(records),
              "<h2>Points taken on a busy host</h2>", _busy(records),
              "<h2>Failed runs</h2>", _failures(records), SCRIPT, "</body></html>"]
    path = os.path.join(outdir, "report.html")
    with open(path, "w") as f:
        f.write("\n".join(parts))
    return path
