"""The network device, for tests/check.py: one boot of the busybox root with
a virtio-net eth0 on QEMU's user network (restrict=on, forwards from
127.0.0.1 only; tempest.net_args), 10.0.2.15/24 from the ip= option.

  net/guest-to-host  the guest's `nc` connects to 10.0.2.100:7000, which
                     QEMU's guestfwd carries to a server of this script on
                     127.0.0.1: the server reads the guest's line and the
                     guest reads the server's answer (QEMU does not pass
                     the server's close on as a FIN: the guest stops its
                     nc after the answer came; restrict=on refuses
                     a guest connection to 10.0.2.2, slirp's alias of the
                     host: the guestfwd is the one way out it leaves)
  net/host-to-guest  a busybox `nc -l -p 7777 -e cat` in the guest, and
                     this script connects to the hostfwd on 127.0.0.1:PORT:
                     the 48 KiB sent come back, both ways through eth0
  net/arp            /proc/net/arp shows 10.0.2.2 (the gateway, which
                     answers for slirp's network) resolved to slirp's MAC,
                     and the counters a reply received and nothing bad; a
                     connection to 10.0.2.77, which nobody answers, fails
                     with EHOSTUNREACH ("No route to host", the ICMP host
                     unreachable the kernel sends itself), its held SYNs
                     counted unresolved after three requests
  net/badip          a second boot with ip=10.0.2.300/24: a console line
                     says eth0 has no address, and the boot ends cleanly
  net/config         busybox ifconfig as root sets eth0's netmask and flags
                     (SIOCSIFNETMASK, SIOCSIFFLAGS); as nobody SIOCSIFADDR is
                     EPERM; ifconfig -a (SIOCGIFCONF, SIOCGIFHWADDR,
                     /proc/net/dev) lists lo and eth0 with its MAC,
                     10.0.2.15 and its mask; busybox's ip addr (netlink's
                     dumps) shows eth0's MAC and 10.0.2.15/24; no ioctl
                     either uses is missing
  net/refused        a connection to 10.0.2.2:9 is refused or times out
                     (restrict=on), and never reaches a host server

Bounded: one boot of at most 120 s, sockets with 30 s timeouts.
"""

import os
import socket
import sys
import tempfile
import threading

import tempest
from checklib import budget_gone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

NAMES = ["net/guest-to-host", "net/host-to-guest", "net/arp", "net/refused", "net/config",
         "net/badip"]
GUEST_PORT = 7777
GUESTFWD_PORT = 7000
LIMIT = 120

GUEST_SCRIPT = """
(echo guest-line | nc 10.0.2.100 %d > /tmp/reply) &
i=0; while [ $i -lt 20 ] && ! grep -q answer /tmp/reply 2>/dev/null; do sleep 1; i=$((i+1)); done
echo "REPLY[$(cat /tmp/reply)]"; kill %%1 2>/dev/null
if nc -w 5 10.0.2.2 9 </dev/null; then echo REFUSED[no]; else echo REFUSED[yes]; fi
nc -w 20 10.0.2.77 80 </dev/null 2>/tmp/unreach.err; echo "UNREACH[$?][$(cat /tmp/unreach.err)]"
printf '#!/bin/sh\ncat 2>/dev/console\necho "CAT-END[$?]" >/dev/console\n' > /tmp/echo.sh
chmod +x /tmp/echo.sh
nc -l -p %d -e /tmp/echo.sh &
sleep 1
echo NET-LISTENING
wait
# cat has ended, but what it wrote may still be on its way (an orphan
# connection sending): power off only once it is delivered (the peer has
# acknowledged our FIN: no longer ESTABLISHED, FIN_WAIT1, CLOSE_WAIT,
# LAST_ACK or CLOSING), or QEMU's end would cut the echo short
i=0
while [ $i -lt 60 ] && grep -Eq ':%04X [0-9A-F]{8}:[0-9A-F]{4} 0[1489B] ' /proc/net/tcp; do
  sleep 0.5; i=$((i+1))
done
echo ARP-BEGIN
cat /proc/net/arp
echo ARP-END
cat /proc/net/dev
ifconfig eth0 netmask 255.255.255.0 up; echo "ROOT-SET[$?]"
su -s /bin/sh nobody -c "ifconfig eth0 10.0.2.16" 2>&1; echo "USER-SET[$?]"
echo CONF-BEGIN; ifconfig -a; ip addr 2>&1; echo CONF-END
""" % (GUESTFWD_PORT, GUEST_PORT, GUEST_PORT)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class HostServer:
    """One connection on 127.0.0.1: reads a line, answers host-answer:LINE."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.sock.settimeout(LIMIT)
        self.port = self.sock.getsockname()[1]
        self.got = None
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            c, _ = self.sock.accept()
            c.settimeout(30)
            data = b""
            while b"\n" not in data:
                d = c.recv(100)
                if not d:
                    break
                data += d
            self.got = data
            c.sendall(b"host-answer:" + data)
            c.close()
        except OSError:
            pass
        finally:
            self.sock.close()


class Watcher:
    """The console as it arrives: at NET-LISTENING, connect to the forward."""

    def __init__(self, port):
        self.port = port
        self.buf = b""
        self.result = None
        self.thread = None

    def write(self, data):
        self.buf += data
        if self.thread is None and b"NET-LISTENING" in self.buf:
            self.thread = threading.Thread(target=self.talk, daemon=True)
            self.thread.start()

    def flush(self):
        pass

    def talk(self):
        # 48 KiB: many full Ethernet segments each way (TCP's MSS from
        # the route's MTU), every byte value.
        msg = b"host-to-guest " + bytes(range(256)) * 192 + b"\n"
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=30) as c:
                c.sendall(msg)
                c.shutdown(socket.SHUT_WR)
                back = b""
                while True:
                    d = c.recv(4096)
                    if not d:
                        break
                    back += d
            self.result = (msg, back)
        except OSError as e:
            self.result = (msg, "error: %s" % e)


def between(text, a, b):
    i = text.find(a)
    j = text.find(b, i + 1) if i >= 0 else -1
    return text[i + len(a):j] if i >= 0 and j >= 0 else ""


def job_net(ctx):
    import userrun
    if ctx.limit(LIMIT) <= 0:
        return budget_gone(ctx, NAMES)
    server = HostServer()
    fwd_port = free_port()
    watcher = Watcher(fwd_port)
    with tempfile.TemporaryDirectory(prefix="netcheck-") as tmp:
        img = os.path.join(tmp, "root.img")
        userrun.mkroot(img, GUEST_SCRIPT, None, "4M", False)
        r = ctx.boot("net", "default", "root=vda poweroff", LIMIT, disk_images=[img],
                     echo=watcher, net=[(fwd_port, GUEST_PORT),
                                        ("guest", GUESTFWD_PORT, server.port)])
    if r is None:
        return budget_gone(ctx, NAMES)
    out = r.output
    tail = " (%s; console in %s)" % (r.status, r.keep)
    want = "host-answer:guest-line"
    reply = between(out, "REPLY[", "]")
    ok = server.got == b"guest-line\n" and reply == want
    ctx.results.add("net/guest-to-host", ok and r.ok,
                    "" if ok and r.ok else "server got %r, guest read %r, want %r%s"
                    % (server.got, reply, want, tail))
    if watcher.thread:
        watcher.thread.join(35)
    res = watcher.result
    ok = res is not None and res[0] == res[1]
    ctx.results.add("net/host-to-guest", ok,
                    "" if ok else "sent %d bytes, got back %r%s"
                    % (len(res[0]) if res else 0,
                       (len(res[1]) if isinstance(res[1], bytes) else res[1]) if res else None,
                       tail))
    arp = between(out, "ARP-BEGIN", "ARP-END")
    problems = []
    if not any(l.split()[:3] == ["10.0.2.2", "52:55:0a:00:02:02", "reachable"]
               for l in arp.splitlines()):
        problems.append("no reachable 10.0.2.2 entry")
    counts = dict(zip(arp.split()[-16::2], arp.split()[-15::2])) if "bad" in arp else {}
    if counts.get("bad") != "0" or counts.get("replies_rcvd", "0") == "0":
        problems.append("counters %r" % counts)
    if int(counts.get("unresolved", "0")) < 1 or int(counts.get("requests_sent", "0")) < 5:
        problems.append("10.0.2.77's packets not dropped after three requests: %r" % counts)
    if "UNREACH[0]" in out or "10.0.2.77 " in arp:
        problems.append("10.0.2.77 answered, or its entry stayed")
    unreach = between(out, "UNREACH[", "\n")
    if "No route to host" not in unreach:
        problems.append("the connect to 10.0.2.77 did not fail with EHOSTUNREACH: %r" % unreach)
    ctx.results.add("net/arp", not problems, "; ".join(problems) + ": %r%s" % (arp[-400:], tail))
    ok = "REFUSED[yes]" in out
    ctx.results.add("net/refused", ok, "" if ok else "10.0.2.2:9 answered%s" % tail)
    conf = between(out, "CONF-BEGIN", "CONF-END")
    problems = []
    if "ROOT-SET[0]" not in out:
        problems.append("root's ifconfig failed")
    if "Inappropriate ioctl" in conf:
        problems.append("an ioctl ifconfig or ip uses is missing")
    if "USER-SET[1]" not in out or "Operation not permitted" not in out:
        problems.append("nobody's ifconfig not refused with EPERM")
    for want in ("HWaddr 52:54:00:12:34:56", "inet addr:10.0.2.15", "Mask:255.255.255.0",
                 "UP BROADCAST RUNNING", "Link encap:Local Loopback",
                 "link/ether 52:54:00:12:34:56", "inet 10.0.2.15/24"):
        if want not in conf:
            problems.append("no %r" % want)
    ctx.results.add("net/config", not problems, "; ".join(problems) + ": %r%s" % (conf[-600:], tail))
    if ctx.limit(LIMIT) <= 0:
        return budget_gone(ctx, ["net/badip"])
    r = ctx.boot("net-badip", "default", "ip=10.0.2.300/24 poweroff", 60, net=[])
    if r is None:
        return budget_gone(ctx, ["net/badip"])
    ok = r.ok and "eth0 has no address" in r.output and "inet: eth0 10." not in r.output
    ctx.results.add("net/badip", ok, "" if ok else "status %s, console in %s" % (r.status, r.keep))
