"""Debian's network servers and clients as judges of the sockets, TCP,
UDP and the event interfaces over loopback, for tests/check.py (issue
35).

  debian/netprogs   userland/tests/debian/netprogs.sh inside Tempest on the
                    Debian root (make run USERLAND=debian): redis-server
                    with redis-cli's answers and redis-benchmark;
                    memcached's text protocol; nginx-light, a master and
                    two workers, serving curl a page, a 300 KB file
                    compared byte for byte and a 404; iperf3 over TCP and
                    UDP.  Every check, redis-benchmark's finishing
                    among them, must pass in Tempest
                    (debian/netprogs/NAME) and on the Linux peer, which
                    runs the same script chrooted in the same tree on
                    ext4 (debian/netprogs/peer: the expected outcomes are
                    Linux's).  Each side's figures (requests per second,
                    megabits per second) are printed, not judged.
"""

import os
import re
import sys

from checklib import T_USER, budget_gone, debian_script
import run_check
import tempest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import linux_peer   # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "userland", "tests", "debian", "netprogs.sh")
END = "netprogs-end"
NAME = "debian/netprogs"
# Every check the script makes, so one it never reached fails too.
CHECKS = ("redis/start", "redis/ping", "redis/set", "redis/get", "redis/incr",
          "redis/exit", "memcached/start", "memcached/protocol",
          "nginx/start", "nginx/workers", "curl/page", "curl/big", "curl/404", "nginx/log",
          "nginx/exit", "iperf3/start", "iperf3/tcp", "iperf3/start-udp", "iperf3/udp",
          "redis/benchmark")
LINE = re.compile(r"^(ok|fail) (\S+?)(?:: (.*))?$")


def script():
    return debian_script(SCRIPT)


def outcomes(output):
    """({check: '' when it passed, else why}, [figure lines], ended)."""
    found, figures = {}, []
    for line in output.splitlines():
        m = LINE.match(line.strip())
        if m:
            found[m.group(2)] = "" if m.group(1) == "ok" else (m.group(3) or "failed")
        elif line.startswith("figure "):
            figures.append(line[len("figure "):].strip())
    return found, figures, END in output


def missing_or_failed(found):
    """The checks that did not pass, with why (the peer must pass all)."""
    return {c: found.get(c, "never reached") for c in CHECKS if found.get(c, "x")}


def job(ctx):
    limit = ctx.limit(T_USER)
    if limit < 60:
        return budget_gone(ctx, [NAME])
    text = script()
    status, out, err = run_check.userrun(["--userland", "debian", "--free", "64M"], limit,
                                         run=text)
    found, figures, ended = outcomes(out.decode("utf-8", "replace"))
    for c in CHECKS:
        why = found.get(c, "never reached (exit %s, %s)" % (status, err.strip().splitlines()[-1:]))
        ctx.results.add("%s/%s" % (NAME, c), why == "", why)
    print("%s: Tempest %s" % (NAME, ", ".join(figures) or "no figures"), flush=True)
    try:
        r = linux_peer.run_in_debian_root("default", text, timeout=int(limit))
    except (linux_peer.PeerError, tempest.MachineError, OSError) as e:
        ctx.results.add(NAME + "/peer", False, "the peer's run: %s" % e)
        return
    theirs, peer_figures, peer_ended = outcomes(r.output)
    bad = missing_or_failed(theirs)
    ok = not bad and peer_ended
    why = "; ".join("%s: %s" % kv for kv in list(bad.items())[:4]) or r.reason or "no end line"
    ctx.results.add(NAME + "/peer", ok, "" if ok else "on the peer, " + why)
    print("%s: the Linux peer %s" % (NAME, ", ".join(peer_figures) or "no figures"), flush=True)
