"""pgbench as a database workload (issue 31's benchmark): Debian's
PostgreSQL 15 and its pgbench, unmodified, in the Debian root on Tempest
and on the Linux peer alike, run by the macro kind (tools/harness/macro.py).

  pgbench  the point's setup, as user01: initdb, the server on a Unix
           socket only, and pgbench -i -s SCALE, all in /tmp (tmpfs on
           both kernels: Tempest's init mounts it, the peer's preamble
           does), untimed.  The timed command is pgbench's TPC-B-like
           load, CLIENTS clients on THREADS threads for the point's
           seconds, then a fast stop.  One line, "bench pgbench tps=R
           clients=C threads=T scale=S transactions=N" (higher is better;
           R is pgbench's "without initial connection time" figure), or
           "bench pgbench error=..." and status 1.

The data directory is on tmpfs because the two kernels' disks cannot be
made alike here: the peer's ufs.ko cannot write, and S5's 14-character
names cannot hold PostgreSQL's files.  So this figure is the kernel's
process, semaphore, shared-memory and Unix-socket path under a real
database, with fsync a no-op on both sides; the disk's share (issue 32)
is tests/postgres_check.py's, Tempest's UFS beside Linux's ext4.
The client count is fixed (it is the issue's -c 4 -j 2), so the load is
the same at every CPU count and the rate at 2 CPUs over the rate at 1 is
the speed-up.
"""

from .macro_sysbench import seconds_of   # the point's seconds, at least 1

DIR = "/tmp/pgbench"
USER = "user01"
SCALE = 4
CLIENTS, THREADS = 4, 2
BIN = "/usr/lib/postgresql/15/bin"

# Run as user01; every client finds the server by PGHOST.
ENV = ("export PATH=%s:/usr/bin:/bin LANG=C.UTF-8 PGHOST=%s PGUSER=postgres "
       "PGDATABASE=postgres" % (BIN, DIR))

SETUP = """rm -rf %(dir)s && mkdir -p %(dir)s && chown %(user)s %(dir)s || exit 1
cat > %(dir)s/setup.sh <<'EOF'
%(env)s
cd %(dir)s || exit 1
initdb -D data --locale=C.UTF-8 -E UTF8 -U postgres -A trust > initdb.log 2>&1 \\
    || { echo "bench pgbench error=initdb"; tail -3 initdb.log; exit 1; }
pg_ctl -D data -l pg.log -w -t 300 -o "-c listen_addresses='' -k %(dir)s" start > /dev/null \\
    || { echo "bench pgbench error=pg_ctl_start"; tail -3 pg.log; exit 1; }
pgbench -i -q -s %(scale)d > init.log 2>&1 \\
    || { echo "bench pgbench error=pgbench_init"; tail -3 init.log; exit 1; }
EOF
su %(user)s -s /bin/sh -c 'sh %(dir)s/setup.sh'"""

# pgbench prints "tps = 123.456789 (without initial connection time)" and
# "number of transactions actually processed: N".
PARSE = r"""awk -v c=%(clients)d -v t=%(threads)d -v s=%(scale)d '
/^tps = [0-9.]+ \(without initial connection time\)/ { tps = $3 + 0 }
/^number of transactions actually processed:/ { n = $6 + 0 }
END {
    if (tps <= 0) { print "bench pgbench error=no_tps"; exit 1 }
    printf "bench pgbench tps=%%.2f clients=%%d threads=%%d scale=%%d transactions=%%d\n", tps, c, t, s, n
}' %(out)s"""


def setup(dir=DIR, user=USER, scale=SCALE):
    """Shell lines run as root: the cluster made, started and loaded."""
    return SETUP % {"dir": dir, "user": user, "env": ENV, "scale": scale}


def command(point, dir=DIR, user=USER):
    """The timed command: pgbench's run, the server stopped, the line."""
    out = "%s/bench.log" % dir
    run = "pgbench -c %d -j %d -T %d > %s 2>&1" % (CLIENTS, THREADS, seconds_of(point), out)
    stop = "pg_ctl -D %s/data -m fast -w stop > /dev/null 2>&1" % dir
    parse = PARSE % {"clients": CLIENTS, "threads": THREADS, "scale": SCALE, "out": out}
    return ("su %s -s /bin/sh -c '%s; %s; st=$?; %s; exit $st'; st=$?\n"
            "if [ $st -ne 0 ]; then echo \"bench pgbench error=pgbench_status_$st\"; "
            "tail -5 %s; exit 1; fi\n%s\n" % (user, ENV, run, stop, out, parse))


def prepare(tmp, point):
    """The pgbench point: no disk, the cluster in its setup, the run."""
    return {"disks": [], "users": [], "setup": setup(), "command": command(point)}


PREPARE = {"pgbench": prepare}
