"""Debian's PostgreSQL 15 as a judge of the Linux ABI, for tests/check.py
(issue 31).

  debian/postgres       userland/tests/debian/postgres.sh inside Tempest on
                        the UFS root (make run USERLAND=debian): initdb,
                        pg_ctl start on a Unix socket, psql queries whose
                        answers are known, pgbench -i -s 1 and pgbench -c 4
                        -j 2 -T 10, the pgbench tables' sizes and balances,
                        a clean stop.  Tempest's lines must be the known
                        ones (debian/postgres), and so must the Linux
                        peer's, which runs the same script chrooted in the
                        same tree on ext4 (debian/postgres/peer): the
                        answers are Linux's.  Each
                        side's tps is printed, a figure and not a judge.
  debian/postgres/long  the same with the issue's pgbench -i -s 4 and
                        -T 30 (make check-long)
"""

import os
import sys

from checklib import T_USER, budget_gone
import run_check
import tempest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import linux_peer   # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "userland", "tests", "debian", "postgres.sh")
END = "pg-end\n"
FREE = "256M"       # the cluster, its WAL and pgbench's tables at scale 4


def script(scale, seconds):
    with open(SCRIPT) as f:
        return "SCALE=%d RUN_SECONDS=%d\n%s" % (scale, seconds, f.read())


def want(scale):
    """The lines before pg-end that postgres.sh prints when all is well."""
    return ("initdb 0\nstart 0\n"
            "10000|50005000|2b332936b455bd940cd501705cc6c9c3\n"   # count, sum, md5 of the rows
            "1428\n700\n"                                         # the update, the index lookup
            "pgbench-init 0\npgbench 0\n"
            "%d|%d|%d\nt\nstop 0\n" % (100000 * scale, scale, 10 * scale))


def split(output):
    """(the judged lines, the tps figure or '') of one side's output."""
    judged, _, rest = output.partition(END)
    tps = next((l for l in rest.splitlines() if l.startswith("tps")), "")
    return judged, tps


def make_job(long):
    name = "debian/postgres/long" if long else "debian/postgres"
    scale, seconds = (4, 30) if long else (1, 10)

    def job(ctx):
        limit = ctx.limit(2 * T_USER if long else T_USER)
        if limit < 60:
            return budget_gone(ctx, [name])
        text = script(scale, seconds)
        status, out, err = run_check.userrun(["--userland", "debian", "--free", FREE], limit,
                                             run=text)
        mine, tps = split(out.decode("utf-8", "replace"))
        ok = mine == want(scale)
        ctx.results.add(name, ok, "" if ok else "exit %s, printed %r (%s)" % (
            status, mine[-300:], err.strip().splitlines()[-1:]))
        print("%s: Tempest %s" % (name, tps or "no tps"), flush=True)
        try:
            r = linux_peer.run_in_debian_root("default", text, timeout=int(limit), free=FREE)
        except (linux_peer.PeerError, tempest.MachineError, OSError) as e:
            ctx.results.add(name + "/peer", False, "the peer's run: %s" % e)
            return
        theirs, peer_tps = split(r.output)
        ok = theirs == want(scale) and r.status == 0
        ctx.results.add(name + "/peer", ok, "" if ok else "the peer printed %r (%s)" % (
            theirs[-300:], r.reason or "exit %s" % r.status))
        print("%s: the Linux peer %s" % (name, peer_tps or "no tps"), flush=True)
    return job
