"""The long checks of mapped-page reclaim, for tests/check.py --long.

Each boots a machine from a root image large enough for a file bigger
than the machine's memory and runs /tests/t_bigmap MIB: the file is
written, mapped shared and read back twice through the mapping with
stores checked (userland/tests/t_bigmap.c).  It passes only when the
pageout daemon unmaps and frees mapped file pages under pressure
(kern/vm/pcache_reclaim.c, through the reverse mappings of
kern/vm/rmap.c) and the OOM killer leaves the program alone.

  rmap/bigmap/mem64/long  one CPU and 64 MiB, an 80 MiB file (about 5
                          minutes under TCG)
  rmap/bigmap/up/long     the up preset (256 MiB), a 288 MiB file (about
                          20 minutes; give check.py a larger --budget on a
                          loaded host)

Both boot with syncwrites=off: the file's block allocations would
otherwise each write metadata synchronously, which is not what is being
tested and multiplies the time.  The small default of the program runs in
make check with the other user tests, and the ktest reclaim_mapped maps a
file larger than the memory it leaves free.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import user_check
from checklib import budget_gone, fail_reason

# (job, machine, file MiB, image size)
VARIANTS = [("rmap/bigmap/mem64/long", "cpus=1,mem=64", 80, "128M"),
            ("rmap/bigmap/up/long", "up", 288, "360M")]
T_BIGMAP = 3600


def make_image(tmp, cmds, size):
    img = os.path.join(tmp, "root.img")
    subprocess.run([sys.executable, user_check.MKROOT, img, "--size", size,
                    "--init", os.path.join(user_check.USERLAND, "init"),
                    "--tests", os.path.join(user_check.USERLAND, "tests"),
                    "--run", user_check.run_script(cmds)], check=True)
    return img


def make_job(name, machine, mib, size):
    def job(ctx):
        user_check.build_userland()
        cmds = [("t_bigmap/%d" % mib, "/tests/t_bigmap %d" % mib)]
        tmp = tempfile.mkdtemp(prefix="tempest-bigmap-")
        try:
            img = make_image(tmp, cmds, size)
            r = ctx.boot(name, machine, "root=vda syncwrites=off poweroff", T_BIGMAP,
                         disk_images=[img])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if r is None:
            return budget_gone(ctx, [name])
        results = user_check.judge(r.output, cmds)
        for test, ok, reason in results:
            ctx.results.add(name + "/" + test, ok, reason)
        ctx.results.add(name, r.ok and bool(results), fail_reason(r, []))
    return job


def jobs():
    return [(name, make_job(name, machine, mib, size)) for name, machine, mib, size in VARIANTS]
