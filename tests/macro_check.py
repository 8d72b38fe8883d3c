"""The macro benchmarks' job in make check (tests/check.py): the harness's
macro kind and the reduced pmake point on Tempest and the Linux peer
(tests/test_macro_harness.py)."""

import os

from checklib import ROOT, run_host_script

# Two boots of the Debian root (about a minute of compiling each under TCG)
# and the images they need, with room for a loaded host.
T_MACRO = 1500


def job_macro(ctx):
    """bench/sweeps/macro-smoke: a reduced pmake on the Debian root at 2
    CPUs, Tempest and Linux, its records checked; the host-side tests of
    macro.py, macro_pmake.py and bench/pmake (tests/test_macro_harness.py)."""
    run_host_script(ctx, "bench/macro", os.path.join(ROOT, "tests", "test_macro_harness.py"),
                    T_MACRO, boots=True)
