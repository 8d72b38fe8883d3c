"""Python's own regression suite as a judge of the Linux ABI, for
tests/check.py (issue 31).

  debian/pysuite       Debian's python3 with its libpython3.11-testsuite,
                       unmodified, runs `python3 -m test` on a few tests
                       inside Tempest (make run USERLAND=debian) and on
                       the Linux peer, Debian's kernel on the same preset
                       chrooted in the same tree on ext4
                       (tools/linux_peer.py --root); each test's pass,
                       fail or skip is compared, and a test that passes
                       on the peer but not in Tempest fails the job
                       (debian/pysuite/NAME).  The host's Linux runs them
                       too (the same binaries with their own loader, the
                       tree as PYTHONHOME), as a second judge
                       (debian/pysuite/host/NAME; not test_socket,
                       which waits there on the host's own network).
                       Among the few: issue 35's network tests over
                       loopback (test_socket, test_httpservers,
                       test_urllib2_localnet).
  debian/pysuite/long  the same for issue 31's whole list and issue 35's
                       with test_ssl and test_asyncio (make check-long)

AF_INET runs over loopback (kern/net/inet/), so test_os, test_signal and
test_epoll's set-up pass; what still differs (parts of test_socket that
need IPv6, raw sockets or a network device) the long job lists as
differences, as they are.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from checklib import T_USER, budget_gone
import run_check
import tempest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import linux_peer   # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.path.join(ROOT, "build", "debian", "tree")
# Issue 35's network tests (over loopback; test_ssl, about 30 s a kernel,
# and test_asyncio, four minutes under TCG, in the long list only, to keep
# make check under 30 minutes) beside issue 31's.
NET = ("test_socket", "test_httpservers", "test_urllib2_localnet")
SMALL = ("test_pty", "test_fcntl", "test_select", "test_mmap", "test_poll",
         "test_resource") + NET
LONG = ("test_os", "test_posix", "test_signal", "test_socket", "test_select", "test_selectors",
        "test_epoll", "test_subprocess", "test_threading", "test_thread", "test_mmap",
        "test_fcntl", "test_time", "test_resource", "test_tempfile", "test_shutil", "test_io",
        "test_fileio", "test_pty", "test_poll", "test_ssl", "test_asyncio", "test_httpservers",
        "test_urllib2_localnet")
# Not run on the host's Linux: test_socket waits there on the host's own
# network (a container's) until regrtest stops it, five minutes; the Linux
# peer judges it.
HOST_SKIP = ("test_socket",)
RESULT = "== Tests result:"
# Seconds a test may take before regrtest stops it (a failure), on both
# sides: a test waiting for the network must not hold the job.
TEST_TIMEOUT = 300
HEADER = re.compile(r"^\d+ tests? (.*):$")


def statuses(text, names):
    """{name: 'pass' | 'fail' | 'skip'} from regrtest's summary, or None
    when the run printed none (it crashed or ran out of time)."""
    if RESULT not in text:
        return None
    found = dict.fromkeys(names, "pass")
    kind = None
    for line in text.split(RESULT, 1)[1].splitlines():
        m = HEADER.match(line.strip())
        if m:
            what = m.group(1)
            kind = "fail" if "failed" in what else "skip" if "skipped" in what or \
                "no tests" in what else None
        elif not line.strip():
            kind = None
        elif kind and line.startswith(" "):
            for n in line.split():
                if n in found:
                    found[n] = kind
    return found


def script(names):
    """What runs inside Tempest: the tests, then the summary alone."""
    return ("cd /tmp && python3 -m test -j2 --timeout %d %s > /tmp/pysuite.log 2>&1; "
            "sed -n '/%s/,$p' /tmp/pysuite.log" % (TEST_TIMEOUT, " ".join(names), RESULT))


def host_statuses(names, limit):
    """The same tests on the host's Linux with the Debian root's python:
    (statuses, '') or (None, why not)."""
    ld = os.path.join(TREE, "lib64", "ld-linux-x86-64.so.2")
    py = os.path.join(TREE, "usr", "bin", "python3.11")
    if not os.path.exists(os.path.join(TREE, "usr", "lib", "python3.11", "test", "test_os.py")):
        return None, "the Debian root has no libpython3.11-testsuite (tools/debian/packages)"
    libs = ":".join(os.path.join(TREE, d) for d in ("lib/x86_64-linux-gnu",
                                                    "usr/lib/x86_64-linux-gnu"))
    work = tempfile.mkdtemp(prefix="pysuite-host-", dir=os.path.join(ROOT, "build"))
    env = dict(os.environ, PYTHONHOME=os.path.join(TREE, "usr"), TMPDIR=work, LC_ALL="C")
    try:
        r = subprocess.run([ld, "--library-path", libs, py, "-m", "test", "-j2",
                            "--timeout", str(TEST_TIMEOUT)] + list(names),
                           cwd=work, env=env, capture_output=True, timeout=limit,
                           stdin=subprocess.DEVNULL, start_new_session=True)
        found = statuses(r.stdout.decode("utf-8", "replace"), names)
        return (found, "") if found else (None, "no summary from the host's run (status %d)"
                                          % r.returncode)
    except subprocess.TimeoutExpired:
        return None, "the host's run did not end in %d s" % limit
    finally:
        shutil.rmtree(work, ignore_errors=True)


def peer_statuses(names, limit):
    """The same tests on the Linux peer (default preset), chrooted in an
    ext4 image of the Debian root: (statuses, '') or (None, why not)."""
    try:
        r = linux_peer.run_in_debian_root("default", script(names), timeout=limit)
    except (linux_peer.PeerError, tempest.MachineError, OSError) as e:
        return None, "the peer's run: %s" % e
    found = statuses(r.output, names)
    return (found, "") if found else (None, "no summary from the peer's run: %s"
                                      % (r.reason or "exit %s" % r.status))


def judge(name, names, tempest_found, linux, where, results):
    """One result per test: Linux (the peer, or the host) passes it, so
    must Tempest."""
    for n in names:
        ok = linux[n] != "pass" or tempest_found[n] == "pass"
        results.add("%s/%s" % (name, n), ok,
                    "" if ok else "passes on %s, %s in Tempest" % (where, tempest_found[n]))


def make_job(long):
    name = "debian/pysuite/long" if long else "debian/pysuite"
    names = LONG if long else SMALL

    def job(ctx):
        limit = ctx.limit(6 * T_USER if long else 2 * T_USER)
        if limit < 60:
            return budget_gone(ctx, [name])
        status, out, err = run_check.userrun(["--userland", "debian", "--free", "64M"], limit,
                                             run=script(names))
        found = statuses(out.decode("utf-8", "replace"), names)
        if found is None:
            ctx.results.add(name, False, "no summary from Tempest's run: exit %s (%s)"
                            % (status, err.strip().splitlines()[-1:]))
            return
        peer, why = peer_statuses(names, int(limit))
        if peer is None:
            ctx.results.add(name, False, why)
        else:
            judge(name, names, found, peer, "the Linux peer", ctx.results)
        on_host = tuple(n for n in names if n not in HOST_SKIP)
        host, why = host_statuses(on_host, int(limit))
        if host is None:
            ctx.results.add(name + "/host", False, why)
        else:
            judge(name + "/host", on_host, found, host, "the host's Linux", ctx.results)
    return job
