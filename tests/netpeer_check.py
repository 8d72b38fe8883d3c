"""Tempest and the Linux peer on one virtual segment, Debian's programs
the judges of the network device, ARP, ICMP, TCP and UDP between two
machines, for tests/check.py (issue 35).

  debian/netpeer    Two QEMUs joined by the peer segment (tempest.Segment:
                    a netdev dgram on 127.0.0.1, nothing else on it, no
                    gateway): Tempest, 10.0.3.1, on its Debian root (make
                    run USERLAND=debian) and the Linux peer, 10.0.3.2,
                    chrooted in the same tree on ext4, both on the "up"
                    preset (one virtual CPU each), booted together.  Both
                    run userland/tests/debian/netpeer.sh, each its own
                    half.  Judged (debian/netpeer/NAME):
                      in Tempest   ping/peer (busybox ping of the peer,
                                   three answered), nginx/start,
                                   iperf3/start, peer/done (the peer's
                                   end marker came), nginx/log (big.bin
                                   served whole), nginx/exit
                      on the peer  peer/address, ping/tempest, curl/page,
                                   curl/big (300 KB, its sha256 against
                                   Tempest's own), curl/404, iperf3/tcp,
                                   iperf3/tcp-reverse, iperf3/udp,
                                   iperf3/udp-reverse (2 s each)
                    The round trips and the throughputs are printed as
                    figures, not judged.

How the pair runs.  Both root images are made first; then the job holds
the host-core slots of both machines at once (tests/hostcores.py: one
each), boots the peer from a helper thread covered by them and Tempest
from its own thread.  The two meet as netpeer.sh says (bounded waits).
When Tempest's boot ends the peer is given PEER_GRACE seconds to end too
(it ends as soon as it has sent its marker), then stopped.  Every
boot is bounded by LIMIT; each check that did not pass is one failure
line with why, a check never reached among them.  The consoles are kept
in build/check/debian-netpeer/ (Tempest) and build/check/debian-netpeer-peer/.
"""

import os
import re
import sys
import tempfile
import threading

from checklib import LOGDIR, budget_gone, debian_script
import hostcores
import tempest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import linux_peer   # noqa: E402
import userrun      # noqa: E402

SCRIPT = os.path.join(ROOT, "userland", "tests", "debian", "netpeer.sh")
NAME = "debian/netpeer"
MACHINE = "up"              # one virtual CPU each: the pair is two host-core slots
LIMIT = 300                 # seconds, each boot
PEER_GRACE = 30             # seconds the peer may run on once Tempest has ended
FREE = "64M"
TEMPEST_CHECKS = ("ping/peer", "nginx/start", "iperf3/start", "peer/done", "nginx/log",
                  "nginx/exit")
PEER_CHECKS = ("peer/address", "ping/tempest", "curl/page", "curl/big", "curl/404",
               "iperf3/tcp", "iperf3/tcp-reverse", "iperf3/udp", "iperf3/udp-reverse")
LINE = re.compile(r"^(ok|fail) (\S+?)(?:: (.*))?$")


def script(role):
    return debian_script(SCRIPT, "ROLE=%s\n" % role)


def outcomes(output):
    """({check: '' when it passed, else why}, [figure lines], ended)."""
    found, figures = {}, []
    ended = False
    for line in output.splitlines():
        line = line.strip()
        m = LINE.match(line)
        if m:
            found[m.group(2)] = "" if m.group(1) == "ok" else (m.group(3) or "failed")
        elif line.startswith("figure "):
            figures.append(line[len("figure "):].strip())
        elif line.startswith("netpeer-end "):
            ended = True
    return found, figures, ended


def judge(ctx, checks, found, why_missing):
    for c in checks:
        why = found.get(c, why_missing)
        ctx.results.add("%s/%s" % (NAME, c), why == "", why)


def run_pair(ctx, limit, tmp):
    """Boot the pair; (Tempest's BootResult or None, the peer's PeerResult
    or an error text)."""
    img = os.path.join(tmp, "root.img")
    userrun.debian_root(img, script("tempest"), None, FREE)
    with linux_peer.debian_root_image(FREE) as peer_img:
        mine, theirs = tempest.new_segment()
        stop = threading.Event()
        peer = {}

        def run_peer():
            try:
                with hostcores.covered():
                    peer["result"] = linux_peer.run(
                        MACHINE, linux_peer.in_root(script("peer")), timeout=int(limit),
                        disks=[peer_img], net=theirs, stop=stop,
                        keep=os.path.join(LOGDIR, NAME.replace("/", "-") + "-peer"))
            except (linux_peer.PeerError, tempest.MachineError, OSError) as e:
                peer["result"] = "the peer's run: %s" % e
        pair = 2 * tempest.cores_for(MACHINE)
        with hostcores.hold(pair):
            t = threading.Thread(target=run_peer, name="netpeer-peer", daemon=True)
            t.start()
            try:
                r = ctx.boot(NAME, MACHINE, "root=vda poweroff", limit,
                             disk_images=[img], net=mine)
            finally:
                t.join(PEER_GRACE)
                stop.set()
                t.join(60)
        return r, peer.get("result", "the peer's run did not end")


def job(ctx):
    names = ["%s/%s" % (NAME, c) for c in TEMPEST_CHECKS + PEER_CHECKS]
    limit = ctx.limit(LIMIT)
    if limit < 120:
        return budget_gone(ctx, names)
    with tempfile.TemporaryDirectory(prefix="netpeer-") as tmp:
        try:
            r, p = run_pair(ctx, limit, tmp)
        except (userrun.Failure, linux_peer.PeerError, OSError) as e:
            for n in names:
                ctx.results.add(n, False, "not run: %s" % e)
            return
    if r is None:
        return budget_gone(ctx, names)
    found, figures, ended = outcomes(r.output)
    why = "never reached (Tempest's boot: %s%s; console in %s)" % (
        r.status, "" if ended else ", no end line", r.keep)
    judge(ctx, TEMPEST_CHECKS, found, why)
    if isinstance(p, str):
        theirs, peer_figures = {}, []
        why = "never reached (%s)" % p
    else:
        theirs, peer_figures, peer_ended = outcomes(p.output)
        why = "never reached (the peer's run: %s%s)" % (
            "exit status %s" % p.status if p.status is not None else p.reason,
            "" if peer_ended else ", no end line")
    judge(ctx, PEER_CHECKS, theirs, why)
    stray = sorted(set(found) - set(TEMPEST_CHECKS)) + sorted(set(theirs) - set(PEER_CHECKS))
    for c in stray:         # a check the script makes that this list lacks
        ctx.results.add("%s/%s" % (NAME, c), False, "not in netpeer_check.py's lists")
    print("%s: Tempest %s; the Linux peer %s" % (NAME, ", ".join(figures) or "no figures",
                                                  ", ".join(peer_figures) or "no figures"),
          flush=True)
