"""Debian's toolchain inside Tempest, for tests/check.py.

  debian/s5   tools/debian_s5_bundle.py copies Debian's gcc, cc1, as, ld
              and make (unmodified but for their interpreter, search path
              and too-long library names) with glibc onto an S5 root
              under /add; inside Tempest, userland/tests/debian/run.sh
              compiles, assembles and links a hello world and runs it,
              then builds a three-file project with `make -j4`, runs it,
              and finds it up to date the second time.  Each step's output
              and status are checked.

The Debian packages are fetched once into build/debian/ (the network is
needed the first time); the bundle is made anew each run.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from checklib import T_USER, budget_gone
import run_check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLE = os.path.join(ROOT, "tools", "debian_s5_bundle.py")
WANT = b"""cc 0
ld 0
hello from Debian's gcc
hello 0
make 0
square 7 = 49, cube 3 = 27
prog 0
make: 'prog' is up to date.
again 0
"""


def make_bundle(dest):
    """'' or why the bundle could not be made."""
    r = subprocess.run([sys.executable, BUNDLE, dest], capture_output=True, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        return lines[-1] if lines else "debian_s5_bundle.py failed"
    return ""


def job_debian_s5(ctx):
    tmp = tempfile.mkdtemp(prefix="tempest-debian-", dir=os.path.join(ROOT, "build"))
    try:
        bundle = os.path.join(tmp, "add")
        why = make_bundle(bundle)
        if why:
            ctx.results.add("debian/s5", False, why)
            return
        limit = ctx.limit(T_USER)
        if limit < 30:
            return budget_gone(ctx, ["debian/s5"])
        status, out, err = run_check.userrun(["--add", bundle, "--free", "32M"], limit,
                                             run="sh /add/run.sh")
        ok = status == 0 and out == WANT
        ctx.results.add("debian/s5", ok, "" if ok else "exit %s, stdout %r (%s)"
                        % (status, out[-300:], err.strip().splitlines()[-1:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
