"""The long check of mapped-page reclaim, for tests/check.py --long.

rmap/bigmap/up/long boots the `up` preset (256 MiB) from a root image large
enough for a 320 MiB file and runs /tests/t_bigmap 320: the file is
written, mapped shared and read back twice through the mapping with
stores checked (userland/tests/t_bigmap.c).  It passes only when the
pageout daemon unmaps and frees mapped file pages under pressure
(kern/vm/pcache_reclaim.c, through the reverse mappings of
kern/vm/rmap.c) and the OOM killer leaves the program alone.  The small
default of the same program runs in make check with the other user tests,
and the ktest reclaim_mapped maps a file larger than the memory it leaves
free.  Under TCG on a loaded host the job takes most of an hour (the file
goes to the disk and back three times): run it with a larger --budget,
e.g. python3 tests/check.py --long -k rmap/bigmap --budget 7200.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import user_check
from checklib import budget_gone, fail_reason

BIG_MIB = 320          # more than up's 256 MiB
IMAGE_SIZE = "400M"
T_BIGMAP = 3600


def make_image(tmp, cmds):
    img = os.path.join(tmp, "root.img")
    subprocess.run([sys.executable, user_check.MKROOT, img, "--size", IMAGE_SIZE,
                    "--init", os.path.join(user_check.USERLAND, "init"),
                    "--tests", os.path.join(user_check.USERLAND, "tests"),
                    "--run", user_check.run_script(cmds)], check=True)
    return img


def job_bigmap(ctx):
    name = "rmap/bigmap/up/long"
    user_check.build_userland()
    cmds = [("t_bigmap/%d" % BIG_MIB, "/tests/t_bigmap %d" % BIG_MIB)]
    tmp = tempfile.mkdtemp(prefix="tempest-bigmap-")
    try:
        img = make_image(tmp, cmds)
        r = ctx.boot(name, "up", "root=vda poweroff", T_BIGMAP, disk_images=[img])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if r is None:
        return budget_gone(ctx, [name])
    results = user_check.judge(r.output, cmds)
    for test, ok, reason in results:
        ctx.results.add(name + "/" + test, ok, reason)
    ctx.results.add(name, r.ok and bool(results), fail_reason(r, []))


def jobs():
    return [("rmap/bigmap/up/long", job_bigmap)]
