"""Bad input from the wire, for tests/check.py (issue 35): this process
plays every other host of the peer segment (tests/frames.py, Wire) and
sends Tempest random and malformed frames; Tempest must count and drop
them, keep serving, and hold no packet, socket or fragment afterwards.

  net/frames  One boot of the busybox root on "up" (one CPU), eth0 at
              10.0.3.1 on a segment whose other end is this process.
              echod (userland/echod) serves TCP and UDP echo on port 7
              and a never-accepting listener on port 8.  In order, each
              phase judged (net/frames/NAME):
                ready      Tempest answers a ping and a SYN to port 7
                junk       1500 frames of random bytes and lengths
                           (random EtherTypes, IPv4's among them); a ping
                           is still answered after
                truncated  IPv4 headers cut short, header lengths below
                           5 words and past the packet, a version 6, a
                           total length below the header's, and TCP,
                           UDP and ICMP headers cut short or lying
                           about their length: nothing answered, a ping
                           is
                checksums  five each of a bad IP header sum (an echo
                           request), a bad ICMP sum, a bad UDP sum (to
                           the echo port) and a bad TCP sum (a SYN to
                           port 7): none answered, while the same
                           frames with good sums are
                fragments  an echo request in three fragments sent out
                           of order is answered; one whose fragments
                           overlap with different bytes is not, nor one
                           that ends past 65535 bytes; 100 first
                           fragments never completed are held within
                           the limits and expire
                synflood   1000 SYNs from 241 addresses to port 8: at
                           most 256 are answered (the half-open limit),
                           sockstat (asked of echod) counts them but
                           their buffers none (TCP mem within MEM_PAGES),
                           an established connection still echoes and a
                           new one on port 7 opens and echoes; the
                           half-open ones are then reset by their RSTs
                window     on an established connection: data far past
                           the window, an ACK of bytes never sent
                           carrying data, a RST inside the window but
                           not at its edge, a RST far outside it, a SYN
                           and old data again; the two that RFC 5961
                           challenges are answered by an ACK, no injected
                           byte is echoed, and the connection then echoes
                           exactly
                reorder    a connection that offers SACK-permitted gets it
                           in the SYN-ACK (one that did not gets no SACK
                           block); data sent out of order, with two
                           holes, is held: each segment past a hole is
                           answered at once by a duplicate ACK whose SACK
                           blocks name what is held, the latest first,
                           and once the holes fill, all of it is echoed
                           in order
                sack       Tempest sends 7 segments (MSS 200) of which
                           the 2nd and 4th are "lost": after an ACK of
                           the 1st and four duplicate ACKs whose SACK
                           blocks cover the 3rd and 5th-7th, it resends
                           both holes and none of the SACKed segments
                pressure   echod's child takes memory until less than
                           768 kB is free (and keeps it so); then 64
                           datagrams' worth of fragments that never
                           complete (about 2,900 frames), UDP echoes and
                           pings: frames are dropped for want of memory
                           and counted (eth0's drops in /proc/net/dev),
                           and once the memory is let go Tempest answers
                           pings, UDP and the first connection again
                alive      every connection closes cleanly; a ping
                sums       every IPv4 frame Tempest sent had its IP and
                           its ICMP, UDP or TCP checksum right
              and from what the guest prints at the end:
                counted    /proc/net/snmp and /proc/net/netstat count at
                           least the frames each counter must
                           (InHdrErrors, ReasmFails, ReasmOKs, the
                           Icmp, Udp and Tcp InCsumErrors and InErrors,
                           ListenDrops, TCPChallengeACK, TCPOFOQueue,
                           TCPSackRecovery)
                clean      once echod has ended and the queues expired,
                           /proc/net/sockstat has no TCP socket, no
                           fragment held, as many sockets as before and
                           the packets alive (PKT) back at their level
                boot       the boot ends cleanly (no panic)

Bounded: one boot of at most LIMIT seconds; every wait for an answer a
few seconds.  Frames go only to 127.0.0.1's UDP port of Tempest's QEMU.
"""

import os
import random
import re
import struct
import sys
import tempfile
import threading
import time

import frames as fr
import tempest
from checklib import budget_gone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

NAME = "net/frames"
MACHINE = "up"
LIMIT = 300
ECHO, SINK = 7, 8
SYN_QUEUE_MAX = 256             # kern/net/inet/tcp_input.c
# sockstat's TCP memory (pages of rings) during the flood at most: the two
# established connections' rings (4 x 208 KiB), the half-open ones none.
MEM_PAGES = 1024
PHASES = ("ready", "junk", "truncated", "checksums", "fragments", "synflood", "window",
          "reorder", "sack", "pressure", "alive")
CHECKS = PHASES + ("sums", "counted", "clean", "boot")
ECHOD = os.path.join(ROOT, "build", "userland", "echod")

GUEST_SCRIPT = """
echo SOCKSTAT-BEFORE; cat /proc/net/sockstat; echo SOCKSTAT-END
/add/echod %d %d 16
echo "ECHOD-EXIT[$?]"
# Held fragments expire in 30 s; the connections end when their FINs are
# acknowledged: wait for both (bounded), then show what is left.
i=0
while [ $i -lt 90 ]; do
  grep -q '^FRAG: inuse 0 ' /proc/net/sockstat && grep -q '^TCP: inuse 0 .*alloc 0 ' /proc/net/sockstat && break
  sleep 0.5; i=$((i+1))
done
echo SOCKSTAT-AFTER; cat /proc/net/sockstat; echo SOCKSTAT-END
echo SNMP-BEGIN; cat /proc/net/snmp /proc/net/netstat; echo SNMP-END
cat /proc/net/tcp
""" % (ECHO, SINK)


class Injector:
    """The phases, in a thread started when echod says it listens."""

    def __init__(self, wire):
        self.w = wire
        self.results = {}               # phase: '' when it passed, else why
        self.expect = {}                # counter: at least this many
        self.thread = None

    def start(self):
        self.thread = threading.Thread(target=self.run, name="frames-inject", daemon=True)
        self.thread.start()

    def note(self, phase, why):
        self.results[phase] = why

    def need(self, counter, n):
        self.expect[counter] = self.expect.get(counter, 0) + n

    def run(self):
        try:
            for phase in PHASES:
                why = getattr(self, "phase_" + phase)()
                self.note(phase, why)
                if phase == "ready" and why:
                    break
        except Exception as e:         # a bug here is one failure line, not a traceback
            self.note("injector", "the injector stopped: %s: %s" % (type(e).__name__, e))
        finally:
            self.send_done()

    def send_done(self):
        """Tell echod to end; the wire may be closed already if the guest
        ended first (a failure the main thread reports)."""
        w = self.w
        try:
            for _ in range(3):
                w.send_ip(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_UDP,
                                  fr.udp(w.ip, w.tempest_ip, 40000, ECHO, b"done")), gap=0.2)
        except OSError:
            pass

    # ---- phases: each returns '' or why it failed ----

    def phase_ready(self):
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if self.w.ping(0x100, 0, timeout=1.0):
                break
        else:
            return "no answer to a ping in 120 s"
        self.a = fr.Conn(self.w, ECHO)
        if not self.a.open(10):
            return "no SYN-ACK from port %d" % ECHO
        if not self.a.echo(b"hello\n"):
            return "port %d did not echo (got %r)" % (ECHO, self.a.received)
        return ""

    def phase_junk(self):
        w, rnd = self.w, random.Random(35)
        kinds = (fr.ETH_IP, fr.ETH_ARP, 0x86dd, 0x8100, None)
        for i in range(1500):
            n = rnd.choice((rnd.randrange(0, 64), rnd.randrange(0, 1515)))
            kind = rnd.choice(kinds)
            kind = rnd.randrange(65536) if kind is None else kind
            body = bytes(rnd.getrandbits(8) for _ in range(n))
            if kind == fr.ETH_IP and body and rnd.random() < 0.5:
                body = bytes([0x45]) + body[1:]          # a version-4 start, often
            w.send_raw(fr.eth(w.tempest_mac, w.mac, kind, body)[:14 + n])
            if i % 50 == 49:
                time.sleep(0.02)
        # Shorter than a header (not empty: QEMU's dgram netdev takes an
        # empty datagram for its socket's end and stops reading it).
        for n in range(1, 14):
            w.send_raw(bytes(rnd.getrandbits(8) for _ in range(n)), gap=0.002)
        return "" if w.alive(0x200) else "no answer to a ping after the junk"

    def ip_frame(self, payload_or_header):
        self.w.send_raw(fr.eth(self.w.tempest_mac, self.w.mac, fr.ETH_IP, payload_or_header),
                        gap=0.005)

    def phase_truncated(self):
        w = self.w
        good = fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, fr.icmp_echo(0x300, 1, b"x" * 16))
        bad = [good[:n] for n in range(20)]                     # cut inside the header
        for ihl in (0, 3, 4):
            bad.append(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, fr.icmp_echo(0x300, 2),
                               ihl=ihl))
        bad.append(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, fr.icmp_echo(0x300, 3), ihl=15))
        v6 = bytearray(good)
        v6[0] = 0x65
        bad.append(bytes(v6))
        bad.append(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, fr.icmp_echo(0x300, 4), total=12))
        for b in bad:
            self.ip_frame(b)
        self.need("Ip.InHdrErrors", len(bad))
        # past the frame: the total length says more than came
        self.ip_frame(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, fr.icmp_echo(0x300, 5),
                              total=400))
        src, dst = w.ip, w.tempest_ip
        tcp_hdr = fr.tcp(src, dst, 1234, ECHO, 1, 0, fr.SYN)
        for t in (tcp_hdr[:10], fr.tcp(src, dst, 1234, ECHO, 1, 0, fr.SYN, offset=3),
                  fr.tcp(src, dst, 1234, ECHO, 1, 0, fr.SYN, offset=15)):
            self.ip_frame(fr.ipv4(src, dst, fr.PROTO_TCP, t))
        self.need("Tcp.InErrs", 1)          # Linux counts the short offset alone
        for u in (fr.udp(src, dst, 1234, ECHO, b"abcdef", length=4),
                  fr.udp(src, dst, 1234, ECHO, b"abcdef", length=300)):
            self.ip_frame(fr.ipv4(src, dst, fr.PROTO_UDP, u))
        self.need("Udp.InErrors", 2)
        self.ip_frame(fr.ipv4(src, dst, fr.PROTO_ICMP, fr.icmp_echo(0x300, 6)[:4]))
        self.need("Icmp.InErrors", 1)
        answered = w.collect(lambda f: (f.icmp() or (None,))[0] == 0 and f.icmp()[2] == 0x300
                             or (f.tcp() or (0, 0))[1] == 1234
                             or (f.udp() or (0, 0))[1] == 1234, 2.0)
        if answered:
            return "%d of the cut frames were answered" % len(answered)
        return "" if w.alive(0x301) else "no answer to a ping after the cut frames"

    def phase_checksums(self):
        w = self.w
        src, dst = w.ip, w.tempest_ip

        def echo_reply(ident):
            return lambda f: f.icmp() is not None and f.icmp()[0] == 0 and f.icmp()[2] == ident

        def udp_back(sport):
            return lambda f: f.udp() is not None and f.udp()[1] == sport

        def synack(sport):
            return lambda f: f.tcp() is not None and f.tcp()[1] == sport and \
                f.tcp()[4] & fr.SYN

        wrong = []
        for i in range(5):
            self.ip_frame(fr.ipv4(src, dst, fr.PROTO_ICMP, fr.icmp_echo(0x400, i), bad_sum=True))
            self.ip_frame(fr.ipv4(src, dst, fr.PROTO_ICMP, fr.icmp_echo(0x401, i, bad_sum=True)))
            self.ip_frame(fr.ipv4(src, dst, fr.PROTO_UDP,
                                  fr.udp(src, dst, 41000 + i, ECHO, b"bad", bad_sum=True)))
            self.ip_frame(fr.ipv4(src, dst, fr.PROTO_TCP,
                                  fr.tcp(src, dst, 42000 + i, ECHO, 7, 0, fr.SYN,
                                         options=fr.mss_option(), bad_sum=True)))
        self.need("Ip.InHdrErrors", 5)
        for group in ("Icmp", "Udp", "Tcp"):       # each a sum error and an error
            self.need(group + ".InCsumErrors", 5)
            self.need(group + (".InErrs" if group == "Tcp" else ".InErrors"), 5)
        for name, want in (("an echo with a bad IP sum", echo_reply(0x400)),
                           ("an echo with a bad ICMP sum", echo_reply(0x401)),
                           ("a datagram with a bad UDP sum", lambda f: (f.udp() or (0, 0))[1]
                            in range(41000, 41005)),
                           ("a SYN with a bad TCP sum", lambda f: (f.tcp() or (0, 0))[1]
                            in range(42000, 42005))):
            if w.collect(want, 0.5 if wrong else 2.0):
                wrong.append("%s was answered" % name)
        # the same with good sums: answered
        self.ip_frame(fr.ipv4(src, dst, fr.PROTO_ICMP, fr.icmp_echo(0x402, 0)))
        if not w.expect(echo_reply(0x402), 3):
            wrong.append("a good echo was not answered")
        self.ip_frame(fr.ipv4(src, dst, fr.PROTO_UDP, fr.udp(src, dst, 41100, ECHO, b"good")))
        if not w.expect(udp_back(41100), 3):
            wrong.append("a good datagram was not echoed")
        self.ip_frame(fr.ipv4(src, dst, fr.PROTO_TCP,
                              fr.tcp(src, dst, 42100, ECHO, 7, 0, fr.SYN,
                                     options=fr.mss_option())))
        got = w.expect(synack(42100), 3)
        if not got:
            wrong.append("a good SYN was not answered")
        else:
            self.ip_frame(fr.ipv4(src, dst, fr.PROTO_TCP,
                                  fr.tcp(src, dst, 42100, ECHO, 8, 0, fr.RST)))
        return "; ".join(wrong)

    def fragments(self, ident, data, pieces, order):
        """Send an echo request of data in fragments: pieces are (offset
        in bytes, length) of the ICMP message; order, the order sent."""
        w = self.w
        msg = fr.icmp_echo(ident, 1, data)
        for i in order:
            off, n = pieces[i]
            more = 0x2000 if off + n < len(msg) else 0
            self.ip_frame(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, msg[off:off + n],
                                  ident=ident, frag=more | (off // 8)))

    def phase_fragments(self):
        w, wrong = self.w, []

        def reply(ident):
            return lambda f: f.icmp() is not None and f.icmp()[0] == 0 and f.icmp()[2] == ident
        data = bytes(range(256)) * 4 + b"q" * 176                # 1200 bytes, 1208 with ICMP's
        self.fragments(0x500, data, [(0, 400), (400, 400), (800, 408)], (2, 0, 1))
        got = w.expect(reply(0x500), 4)
        if not got:
            wrong.append("the fragmented echo was not answered")
        elif got.icmp()[4] != data:
            wrong.append("the fragmented echo came back changed")
        self.need("Ip.ReasmOKs", 1)
        # overlapping, with other bytes where they overlap
        msg = fr.icmp_echo(0x501, 1, data)
        other = bytearray(msg)
        other[400:416] = b"Z" * 16
        for off, n, src in ((0, 408, msg), (400, 408, bytes(other)), (808, 400, msg)):
            more = 0x2000 if off + n < len(msg) else 0
            self.ip_frame(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, src[off:off + n],
                                  ident=0x501, frag=more | (off // 8)))
        self.need("Ip.ReasmFails", 1)
        # past 65535: the last fragment at offset 65520 with 24 bytes
        self.ip_frame(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, msg[:400], ident=0x502,
                              frag=0x2000))
        self.ip_frame(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP, b"D" * 24, ident=0x502,
                              frag=65520 // 8))
        self.need("Ip.ReasmFails", 1)
        if w.collect(lambda f: reply(0x501)(f) or reply(0x502)(f), 2.0):
            wrong.append("an overlapping or oversized datagram was answered")
        # 100 datagrams begun and never ended
        for i in range(100):
            self.ip_frame(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_ICMP,
                                  fr.icmp_echo(0x600 + i, 1, data)[:1000], ident=0x600 + i,
                                  frag=0x2000))
        if not w.alive(0x503):
            wrong.append("no answer to a ping after the fragments")
        return "; ".join(wrong)

    def phase_synflood(self):
        w, rnd = self.w, random.Random(36)
        sources = {}
        for i in range(1000):
            src = fr.ip_bytes("10.0.3.%d" % rnd.randrange(10, 251))
            sport = rnd.randrange(1024, 65536)
            sources[(src, sport)] = True
            w.send_ip(fr.ipv4(src, w.tempest_ip, fr.PROTO_TCP,
                              fr.tcp(src, w.tempest_ip, sport, SINK, rnd.randrange(1 << 32), 0,
                                     fr.SYN, options=fr.mss_option())), gap=0)
            if i % 25 == 24:
                time.sleep(0.01)
        self.need("TcpExt.ListenDrops", 1)
        acks = w.collect(lambda f: f.tcp() is not None and f.tcp()[0] == SINK
                         and f.tcp()[4] & (fr.SYN | fr.ACK) == fr.SYN | fr.ACK, 4.0)
        half_open = {(f.dst, f.tcp()[1]): f.tcp()[3] for f in acks}
        wrong = []
        if len(half_open) > SYN_QUEUE_MAX:
            wrong.append("%d SYNs answered, more than the %d half-open allowed"
                         % (len(half_open), SYN_QUEUE_MAX))
        if not half_open:
            wrong.append("no SYN was answered")
        stat = self.sockstat()
        if stat is None:
            wrong.append("echod did not answer with /proc/net/sockstat")
        elif stat.get("TCP.alloc", 0) < len(half_open) or stat.get("TCP.mem", 1 << 30) > MEM_PAGES:
            wrong.append("during the flood sockstat said %s: the half-open connections hold "
                         "buffers" % stat)
        if not self.a.echo(b"after the flood\n"):
            wrong.append("the established connection stopped echoing")
        self.b = fr.Conn(w, ECHO)
        if not self.b.open(10):
            wrong.append("a new connection to port %d was not accepted" % ECHO)
        elif not self.b.echo(b"new\n"):
            wrong.append("the new connection did not echo")
        for (src, sport), ack in half_open.items():             # RST: seq = their ACK
            w.send_ip(fr.ipv4(src, w.tempest_ip, fr.PROTO_TCP,
                              fr.tcp(src, w.tempest_ip, sport, SINK, ack, 0, fr.RST)), gap=0.001)
        return "; ".join(wrong)

    def ask(self, what, timeout=5.0, tries=1):
        """Send echod the command what (bytes); its answer (text) or None."""
        w = self.w
        for _ in range(tries):
            sport = random.randrange(41000, 60000)
            w.send_ip(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_UDP,
                              fr.udp(w.ip, w.tempest_ip, sport, ECHO, what)))
            f = w.expect(lambda f: f.udp() is not None and f.udp()[1] == sport, timeout)
            if f:
                return f.udp()[2].decode("ascii", "replace")
        return None

    def sockstat(self):
        """/proc/net/sockstat now, by echod (parsed), or None."""
        text = self.ask(b"sockstat")
        return sockstat(text) if text is not None else None

    def rx_dropped(self, tries=1):
        """eth0's receive drops in /proc/net/dev, by echod, or None."""
        text = self.ask(b"netdev", tries=tries)
        for line in (text or "").splitlines():
            name, _, rest = line.partition(":")
            if name.strip() == "eth0" and len(rest.split()) > 3:
                return int(rest.split()[3])
        return None

    def phase_window(self):
        a, w, wrong = self.a, self.w, []
        w.drain()
        nxt, rcv = a.snd_nxt, a.rcv_nxt
        a.segment(fr.PSH | fr.ACK, b"FAR", seq=nxt + (1 << 30))       # past the window
        a.segment(fr.PSH | fr.ACK, b"UNSENT", ack=rcv + 100000)       # acks bytes never sent
        a.segment(fr.RST | fr.ACK, seq=nxt + 1000)                    # RST in window, not exact
        a.segment(fr.RST | fr.ACK, seq=nxt + (1 << 31))               # RST far outside
        a.segment(fr.SYN, seq=nxt + 10, ack=0, options=fr.mss_option())   # SYN when synchronized
        a.segment(fr.PSH | fr.ACK, b"OLD", seq=nxt - 3)               # bytes already taken
        self.need("TcpExt.TCPChallengeACK", 2)
        acks = a.acks_seen(3.0)
        if any(f.tcp()[4] & fr.RST for f in acks):
            wrong.append("Tempest reset the connection")
        moved = [f for f in acks if f.tcp()[3] != nxt]
        if moved:
            wrong.append("an ACK took injected bytes (ack %d, expected %d)"
                         % (moved[0].tcp()[3], nxt))
        if len(acks) < 2:
            wrong.append("%d ACKs answered the bad segments, not the 2 challenges at least"
                         % len(acks))
        if not a.echo(b"still alive\n"):
            wrong.append("afterwards the connection echoed %r" % a.received[-40:])
        return "; ".join(wrong)

    def phase_reorder(self):
        w, wrong = self.w, []
        if self.a.synack.sack_blocks() or 4 in fr.tcp_options(self.a.synack.body):
            wrong.append("SACK-permitted in the SYN-ACK of a SYN that did not offer it")
        c = self.c = fr.Conn(w, ECHO, syn_options=fr.mss_option() + fr.SACK_PERMITTED)
        if not c.open(10):
            return "no SYN-ACK to a SYN offering SACK"
        if 4 not in fr.tcp_options(c.synack.body):
            wrong.append("the SYN-ACK did not permit SACK")
        data = bytes(random.Random(37).randrange(32, 127) for _ in range(4000))
        base, start = c.snd_nxt, len(c.received)
        w.drain()

        def piece(a, b, blocks):
            """Send data[a:b] at its place; the ACK at once must still
            name base and carry exactly blocks (relative to base)."""
            c.segment(fr.PSH | fr.ACK, data[a:b], seq=base + a)
            f = w.expect(lambda f: c.mine(f) and not f.tcp()[6], 3.0)
            if f is None:
                return "no ACK at once for bytes %d-%d held out of order" % (a, b)
            got = [((x - base) & 0xffffffff, (y - base) & 0xffffffff) for x, y in f.sack_blocks()]
            if f.tcp()[3] != base or got != blocks:
                return "bytes %d-%d out of order: ACK %d with SACK %s, expected ACK %d " \
                       "with SACK %s" % (a, b, (f.tcp()[3] - base) & 0xffffffff, got, 0, blocks)
            return ""
        for a, b, blocks in ((1000, 2000, [(1000, 2000)]),
                             (3000, 3500, [(3000, 3500), (1000, 2000)]),
                             (2500, 3000, [(2500, 3500), (1000, 2000)])):
            why = piece(a, b, blocks)
            if why:
                wrong.append(why)
                break
        self.need("TcpExt.TCPOFOQueue", 3)
        c.segment(fr.PSH | fr.ACK, data[:1000], seq=base)          # the first hole
        c.segment(fr.PSH | fr.ACK, data[2000:2500], seq=base + 2000)    # the second
        c.segment(fr.PSH | fr.ACK, data[3500:], seq=base + 3500)    # the rest, in order
        c.snd_nxt = (base + len(data)) & 0xffffffff
        if not c.echoed(data, start):
            got = c.received[start:]
            wrong.append("after the holes filled, %d of %d bytes came back%s" % (
                len(got), len(data), "" if data.startswith(got) else ", not in order"))
        return "; ".join(wrong)

    def phase_sack(self):
        w, wrong = self.w, []
        d = self.d = fr.Conn(w, ECHO, syn_options=fr.mss_option(200) + fr.SACK_PERMITTED)
        if not d.open(10):
            return "no SYN-ACK to a SYN with MSS 200"
        w.drain()
        data = bytes(random.Random(38).randrange(32, 127) for _ in range(1400))
        d.send(data)
        segs, end = {}, time.monotonic() + 10
        while sum(len(v) for v in segs.values()) < len(data) and time.monotonic() < end:
            f = w.expect(d.mine, end - time.monotonic())
            if f is not None and f.tcp()[6]:
                segs[(f.tcp()[2] - d.rcv_nxt) & 0xffffffff] = f.tcp()[6]
        if sorted(segs) != list(range(0, 1400, 200)):
            return "the echo of 1400 bytes came as segments at %s, not 7 of 200" % sorted(segs)
        s0 = d.rcv_nxt
        ack = lambda blocks=(): d.segment(fr.ACK, ack=s0 + 200, options=fr.sack_option(
            [(s0 + a, s0 + b) for a, b in blocks]) if blocks else b"")
        ack()                                                       # the 1st came
        for blocks in ([(400, 600)], [(800, 1000), (400, 600)], [(800, 1200), (400, 600)],
                       [(800, 1400), (400, 600)]):
            ack(blocks)                                             # duplicates, SACKing
        self.need("TcpExt.TCPSackRecovery", 1)
        again = [(f.tcp()[2] - s0) & 0xffffffff for f in w.collect(
            lambda f: d.mine(f) and f.tcp()[6], 1.0)]
        for hole in (200, 600):
            if hole not in again:
                wrong.append("the hole at %d was not sent again (sent: %s)" % (hole, again))
        sacked = sorted(set(again) & {400, 800, 1000, 1200})
        if sacked:
            wrong.append("SACKed segments %s were sent again" % sacked)
        d.received += data
        d.rcv_nxt = (s0 + len(data)) & 0xffffffff
        d.segment(fr.ACK)                                           # all of it came
        if not d.echo(b"after the losses\n"):
            wrong.append("afterwards the connection did not echo")
        return "; ".join(wrong)

    def pressure_flood(self):
        """Fragments of 64 datagrams that never complete, enough to fill
        the reassembly memory (IPFRAG_MEM) twice over, with UDP echoes and
        pings among them."""
        w = self.w
        for n, off in enumerate(range(0, 64000, 1480)):
            for ident in range(64):
                w.send_ip(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_UDP, bytes(1480),
                                  ident=0x5000 + ident, frag=0x2000 | (off // 8)), gap=0)
            w.send_ip(fr.ipv4(w.ip, w.tempest_ip, fr.PROTO_UDP,
                              fr.udp(w.ip, w.tempest_ip, 40500 + n, ECHO, bytes(1000))), gap=0)
            w.ping(0x800 + n, 0, timeout=0.01)
        w.drain(1.0)

    def phase_pressure(self):
        w, wrong = self.w, []
        before = self.rx_dropped(tries=3)
        if before is None:
            return "echod did not answer with /proc/net/dev"
        hog = self.ask(b"hog", timeout=120)
        if not hog or not re.match(r"^hog \d+ \d+$", hog):
            self.ask(b"unhog", tries=3)
            return "echod's child did not take the memory (it said %r)" % hog
        self.pressure_flood()
        unhog = self.ask(b"unhog", timeout=10, tries=5)
        if not unhog or not unhog.startswith("unhog "):
            wrong.append("no answer to unhog (%r)" % unhog)
        after = self.rx_dropped(tries=5)
        if after is None or after <= before:
            wrong.append("no frame was dropped for want of memory (eth0 drops %s, then %s; "
                         "the hog said %r)" % (before, after, hog))
        if not w.alive(0x900):
            wrong.append("no answer to a ping once the memory was let go")
        if self.ask(b"still there", tries=3) != "still there":
            wrong.append("no UDP echo once the memory was let go")
        if not self.a.echo(b"after the pressure\n"):
            wrong.append("the first connection did not echo once the memory was let go")
        return "; ".join(wrong)

    def phase_alive(self):
        wrong = []
        for name in ("a", "b", "c", "d"):
            c = getattr(self, name, None)
            if c is not None and c.rcv_nxt is not None and not c.close():
                wrong.append("connection %s did not close cleanly" % name)
        if not self.w.alive(0x700):
            wrong.append("no answer to a final ping")
        return "; ".join(wrong)


class Console:
    """The console as it comes: start the injector when echod listens."""

    def __init__(self, injector):
        self.inj = injector
        self.buf = b""

    def write(self, data):
        self.buf += data
        if self.inj.thread is None and b"echod: listening" in self.buf:
            self.inj.start()

    def flush(self):
        pass


def snmp(text):
    """{'Group.Name': value} from /proc/net/snmp and netstat's lines."""
    out, names = {}, {}
    for line in text.splitlines():
        group, _, rest = line.partition(":")
        fields = rest.split()
        if not fields:
            continue
        if all(re.match(r"^-?\d+$", f) for f in fields):
            for n, v in zip(names.get(group, []), fields):
                out["%s.%s" % (group.strip(), n)] = int(v)
        else:
            names[group] = fields
    return out


def sockstat(text):
    """{'TCP.inuse': N, ...} from /proc/net/sockstat."""
    out = {}
    for line in text.splitlines():
        group, _, rest = line.partition(":")
        f = rest.split()
        for k, v in zip(f[::2], f[1::2]):
            if re.match(r"^\d+$", v):
                out["%s.%s" % (group.strip(), k)] = int(v)
    return out


def between(text, a, b):
    i = text.find(a)
    j = text.find(b, i + len(a)) if i >= 0 else -1
    return text[i + len(a):j] if i >= 0 and j >= 0 else None


def judge_counts(counts, expect):
    short = ["%s %d < %d" % (k, counts.get(k, 0), n) for k, n in sorted(expect.items())
             if counts.get(k, 0) < n]
    return "counted too few: " + ", ".join(short) if short else ""


def judge_clean(before, after):
    if before is None or after is None:
        return "no /proc/net/sockstat before and after"
    b, a = sockstat(before), sockstat(after)
    wrong = []
    for key in ("TCP.inuse", "TCP.alloc", "TCP.tw", "FRAG.inuse", "FRAG.memory"):
        if a.get(key, -1) != 0:
            wrong.append("%s %s" % (key, a.get(key)))
    if a.get("sockets.used", -1) != b.get("sockets.used", -2):
        wrong.append("sockets used %s, %s before" % (a.get("sockets.used"), b.get("sockets.used")))
    # The device's receive ring keeps its buffers posted: the packets alive
    # come back to the level before the flood, give or take a few in flight.
    if a.get("PKT.inuse", 1 << 30) > b.get("PKT.inuse", 0) + 4:
        wrong.append("packets alive %s, %s before" % (a.get("PKT.inuse"), b.get("PKT.inuse")))
    return "left behind: " + ", ".join(wrong) if wrong else ""


def echod_story(out):
    """What the console says about echod's end: its exit status and the
    lines that tell why (its own complaints, the kernel's kills)."""
    status = re.search(r"ECHOD-EXIT\[(\d+)\]", out)
    said = [l.strip() for l in out.splitlines()
            if l.startswith("echod:") and "listening" not in l or "killed by signal" in l
            or l.startswith("PANIC")]
    return ": %s%s" % ("exit status %s" % status.group(1) if status else "echod never ended",
                       "".join("; " + l[:160] for l in said[:3]))


def job(ctx):
    names = ["%s/%s" % (NAME, c) for c in CHECKS]
    if ctx.limit(LIMIT) < 120:
        return budget_gone(ctx, names)
    import userrun
    mine, _ = tempest.new_segment()
    wire = fr.Wire(mine)
    inj = Injector(wire)
    try:
        with tempfile.TemporaryDirectory(prefix="frames-") as tmp:
            add = os.path.join(tmp, "add")
            os.makedirs(add)
            with open(ECHOD, "rb") as src, open(os.path.join(add, "echod"), "wb") as dst:
                dst.write(src.read())
            os.chmod(os.path.join(add, "echod"), 0o755)
            img = os.path.join(tmp, "root.img")
            userrun.mkroot(img, GUEST_SCRIPT, add, "4M", False)
            r = ctx.boot(NAME, MACHINE, "root=vda poweroff", LIMIT, disk_images=[img],
                         echo=Console(inj), net=mine)
    except (userrun.Failure, OSError) as e:
        for n in names:
            ctx.results.add(n, False, "not run: %s" % e)
        wire.close()
        return
    if inj.thread:
        inj.thread.join(30)
    wire.close()
    if r is None:
        return budget_gone(ctx, names)
    tail = " (%s; console in %s)" % (r.status, r.keep)
    if "injector" in inj.results:
        ctx.results.add(NAME + "/injector", False, inj.results["injector"])
    for p in PHASES:
        why = inj.results.get(p, "not reached" if inj.thread else "echod never listened")
        ctx.results.add("%s/%s" % (NAME, p), why == "", why + (tail if why else ""))
    bad = wire.bad_sums
    why = "" if wire.received and not bad else \
        "%d of the %d IPv4 frames Tempest sent had a wrong checksum (the first: %s)" % (
            len(bad), wire.received, bad[0][:64].hex()) if bad else "Tempest sent nothing"
    ctx.results.add(NAME + "/sums", why == "", why)
    out = r.output
    counts = snmp(between(out, "SNMP-BEGIN", "SNMP-END") or "")
    why = judge_counts(counts, inj.expect) if counts else "no counters printed" + tail
    ctx.results.add(NAME + "/counted", why == "", why)
    parts = out.split("SOCKSTAT-BEFORE", 1)
    before = between(out, "SOCKSTAT-BEFORE", "SOCKSTAT-END")
    after = between(out, "SOCKSTAT-AFTER", "SOCKSTAT-END")
    why = judge_clean(before, after) if len(parts) == 2 else "no sockstat" + tail
    ctx.results.add(NAME + "/clean", why == "", why + (tail if why else ""))
    ok = r.ok and "ECHOD-EXIT[0]" in out
    ctx.results.add(NAME + "/boot", ok, "" if ok else "echod or the boot did not end cleanly"
                    + echod_story(out) + tail)
    print("%s: %d frames sent, %d ARP answers" % (NAME, wire.sent, wire.arp_replies), flush=True)
