"""The experiment harness (make bench SWEEP=...; tools/sweep.py is its
command line): sweeps over workloads, machines, CPU counts, option sets,
kernels and accelerators, run as independent emulator boots (locally or
on Dask distributed), with one JSON record per run, CSV tables, plots and
an HTML report per sweep.

  workloads.py  the workloads: guest commands, result lines, metrics
  sweep.py      the sweep file format; checking and expanding it to points
  runner.py     one boot for a batch of points, giving their records
  macro.py      the "macro" kind: Debian's programs on the Debian root
                with extra disks (pmake, pmakeind, gaede), Sprite's measures
  macro_pmake.py  pmake and pmakeind's disk of kernel sources
  execute.py    resume, local pool or Dask, progress, writing results
  records.py    the record format, results.csv and summary.csv
  plots.py      the PNG plots
  report.py     report.html
  papers.py     the papers sweep's section: each paper's headline beside
                this sweep's figures (papers_plots.py draws them)
"""
