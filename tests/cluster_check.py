"""Hurricane clustering (kern/cluster/) in make check, for tests/check.py:

  cluster/hector     ktest=all with cluster=4 witness=on lockstat=contended
                     on hector (4 clusters of 4): the whole suite (processes,
                     file systems, the clustered DNLC in place of the
                     plain one) passes, the cluster_* tests run rather than
                     skip (their own maps cover sizes 1, 4 and 16), and
                     witness finds no reversal among the kernel's classes;
                     a fresh S5 root fsck'd after
  cluster/numachine  the cluster and DNLC ktests with cluster=node
                     lock=mcs on numachine (4 clusters, one per node)
  cluster/size/PRESET/N
                     hector (lock=h2mcs) and numachine (lock=mcs) booted
                     with cluster=1, 4 and 16 (16, 4 and 1 clusters): the
                     cluster ktests (CLUSTER_TESTS) and dnlc_mp_1cpu, the
                     livelock's reproducer, only, to keep make check short
                     (about 10 s a boot); each test counts
  user/cluster/hector
                     (tests/check.py, tests/user_check.py) the user test
                     programs' small set in Tempest on hector with
                     cluster=4 witness=on; the whole set in make check-long
                     (user/cluster/hector/long)
"""

import re

from checklib import T_KTEST, budget_gone, ktest_results, fail_reason, parse_ktests
from fs_check import fs_boot
from ktest_check import KTEST_DISKS, KTEST_ATA_DISKS, WITNESS_RE

# The tests that must pass (not skip) when cluster= is given.
CLUSTER_TESTS = ("cluster_maps", "cluster_calls", "cluster_forced_conflict",
                 "cluster_mutual_conflict", "cluster_dnlc_coherent", "cluster_dnlc_combining",
                 "cluster_pcache_coherent", "cluster_pcache_combining", "cluster_pcache_conflict",
                 "cluster_pcache_mp", "cluster_vm_pool",
                 "cluster_same_cpu_waiter")
# The presets and cluster sizes of the size jobs, and each preset's lock.
SIZE_PRESETS = (("hector", "h2mcs"), ("numachine", "mcs"))
CLUSTER_SIZES = (1, 4, 16)
CLUSTER_LINE_RE = re.compile(r"^cluster: (\d+) clusters? of ", re.M)


def cluster_problems(r, want_clusters):
    """What is wrong with a clustered boot's output: the boot's cluster
    line and every cluster test's PASS."""
    p = []
    m = CLUSTER_LINE_RE.search(r.output)
    if not m:
        p.append("no 'cluster: N clusters' line")
    elif int(m.group(1)) != want_clusters:
        p.append("%s clusters, not %d" % (m.group(1), want_clusters))
    _, tests = parse_ktests(r.output)
    passed = {n for res, n, _ in tests if res == "PASS"}
    missing = [t for t in CLUSTER_TESTS if t not in passed]
    if missing:
        p.append("did not pass: %s" % ", ".join(missing))
    return p


def job_cluster_hector(ctx):
    name = "cluster/hector"
    r, fsp = fs_boot(ctx, name, "hector",
                     "ktest=all poweroff cluster=4 witness=on lockstat=contended", T_KTEST,
                     disks=KTEST_DISKS, ata_disks=KTEST_ATA_DISKS)
    if r is None:
        return budget_gone(ctx, [name, name + "/clusters", name + "/order", name + "/fsck"])
    ktest_results(ctx, name, r, individual=False)
    p = cluster_problems(r, 4)
    ctx.results.add(name + "/clusters", r.ok and not p, fail_reason(r, p))
    real = [m.group(0) for m in WITNESS_RE.finditer(r.output)
            if not (m.group(1).startswith("test_") and m.group(2).startswith("test_"))]
    ctx.results.add(name + "/order", r.ok and not real, fail_reason(r, real))
    ctx.results.add(name + "/fsck", r.ok and not fsp, fail_reason(r, fsp))


def job_cluster_numachine(ctx):
    name = "cluster/numachine"
    r = ctx.boot(name, "numachine", "ktest=cluster_*,dnlc_* cluster=node lock=mcs poweroff",
                 T_KTEST)
    if r is None:
        return budget_gone(ctx, [name, name + "/clusters"])
    ktest_results(ctx, name, r, individual=True)
    p = cluster_problems(r, 4)
    ctx.results.add(name + "/clusters", r.ok and not p, fail_reason(r, p))


def make_cluster_size_job(preset, lock, size, ncpus=16):
    """cluster/size/PRESET/SIZE: the cluster ktests under cluster=SIZE."""
    name = "cluster/size/%s/%d" % (preset, size)
    tests = ",".join(CLUSTER_TESTS + ("dnlc_mp_1cpu",))

    def job(ctx):
        r = ctx.boot(name, preset, "ktest=%s cluster=%d lock=%s poweroff" % (tests, size, lock),
                     T_KTEST)
        if r is None:
            return budget_gone(ctx, [name, name + "/clusters"])
        ktest_results(ctx, name, r, individual=True)
        p = cluster_problems(r, (ncpus + size - 1) // size)
        ctx.results.add(name + "/clusters", r.ok and not p, fail_reason(r, p))
    return job


def size_jobs():
    """(name, function) of every size job."""
    return [("cluster/size/%s/%d" % (p, n), make_cluster_size_job(p, lock, n))
            for p, lock in SIZE_PRESETS for n in CLUSTER_SIZES]
