"""Ethernet frames by hand, for the frame-injection judge
(tests/frames_check.py, issue 35): builders for ARP, IPv4, ICMP, UDP and
TCP with every field open to being wrong, and Wire, the far end of the
peer segment (tempest.Segment) played by this process instead of the
Linux peer.

Wire binds the peer's UDP port on 127.0.0.1, so QEMU's dgram netdev
carries Tempest's frames here and ours to Tempest.  A reader thread
answers ARP for every address of 10.0.3.0/24 but Tempest's own (all with
the peer's MAC) and queues every other frame; the judge takes what it
waits for with Wire.expect.  Conn is a TCP connection made by hand on
it: no timestamps, no window scaling, one segment at a time.
"""

import queue
import random
import socket
import struct
import threading
import time

ETH_IP, ETH_ARP = 0x0800, 0x0806
PROTO_ICMP, PROTO_TCP, PROTO_UDP = 1, 6, 17
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
BROADCAST = b"\xff" * 6


def mac_bytes(text):
    return bytes(int(x, 16) for x in text.split(":"))


def ip_bytes(text):
    return socket.inet_aton(text)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def eth(dst, src, kind, payload):
    return dst + src + struct.pack("!H", kind) + payload


def arp(op, sha, spa, tha, tpa):
    return struct.pack("!HHBBH", 1, ETH_IP, 6, 4, op) + sha + spa + tha + tpa


def ipv4(src, dst, proto, payload, ident=0, frag=0, ttl=64, bad_sum=False, ihl=5,
         total=None, options=b""):
    """An IPv4 header in front of payload.  frag: the flags-and-offset
    field as sent (0x2000 more fragments, offset in 8-byte units); total:
    the length field (default the true one); ihl: the header's length
    field (the options make up the difference)."""
    length = 20 + len(options) + len(payload) if total is None else total
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, length & 0xffff, ident, frag, ttl,
                      proto, 0, src, dst) + options
    s = checksum(hdr)
    if bad_sum:
        s ^= 0x5a5a
    return hdr[:10] + struct.pack("!H", s) + hdr[12:] + payload


def pseudo(src, dst, proto, length):
    return src + dst + struct.pack("!BBH", 0, proto, length)


def icmp_echo(ident, seq, data=b"", bad_sum=False, kind=8):
    msg = struct.pack("!BBHHH", kind, 0, 0, ident, seq) + data
    s = checksum(msg) ^ (0x1234 if bad_sum else 0)
    return msg[:2] + struct.pack("!H", s) + msg[4:]


def udp(src, dst, sport, dport, data, bad_sum=False, length=None):
    n = 8 + len(data) if length is None else length
    msg = struct.pack("!HHHH", sport, dport, n & 0xffff, 0) + data
    s = checksum(pseudo(src, dst, PROTO_UDP, len(msg)) + msg) or 0xffff
    if bad_sum:
        s ^= 0x4321
    return msg[:6] + struct.pack("!H", s) + msg[8:]


def tcp(src, dst, sport, dport, seq, ack, flags, data=b"", window=65535, options=b"",
        bad_sum=False, offset=None):
    off = (20 + len(options)) // 4 if offset is None else offset
    msg = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                      off << 4, flags, window, 0, 0) + options + data
    s = checksum(pseudo(src, dst, PROTO_TCP, len(msg)) + msg)
    if bad_sum:
        s ^= 0x1111
    return msg[:16] + struct.pack("!H", s) + msg[18:]


def mss_option(mss=1460):
    return struct.pack("!BBH", 2, 4, mss)


SACK_PERMITTED = b"\x01\x01\x04\x02"        # NOP, NOP, SACK-permitted (RFC 2018)


def sack_option(blocks):
    """NOP, NOP and a SACK option with blocks [(start, end), ...]."""
    body = b"".join(struct.pack("!II", a & 0xffffffff, b & 0xffffffff) for a, b in blocks)
    return b"\x01\x01" + struct.pack("!BB", 5, 2 + len(body)) + body


def tcp_options(body):
    """{kind: value bytes} of a TCP segment's options (the last of a kind)."""
    end, i, out = (body[12] >> 4) * 4, 20, {}
    while i < end and body[i] != 0:
        if body[i] == 1:
            i += 1
            continue
        if i + 1 >= end or body[i + 1] < 2:
            break
        out[body[i]] = body[i + 2:i + body[i + 1]]
        i += body[i + 1]
    return out


class Frame:
    """A frame Tempest sent, its IPv4 and transport fields parsed where
    they are whole."""

    def __init__(self, raw):
        self.raw = raw
        self.kind = struct.unpack("!H", raw[12:14])[0] if len(raw) >= 14 else None
        self.proto = None
        if self.kind == ETH_IP and len(raw) >= 34:
            ip = raw[14:]
            hl = (ip[0] & 15) * 4
            total = struct.unpack("!H", ip[2:4])[0]
            self.src, self.dst = ip[12:16], ip[16:20]
            self.ident = struct.unpack("!H", ip[4:6])[0]
            self.proto = ip[9]
            self.body = ip[hl:total]

    def sums_ok(self):
        """The IPv4 header's checksum and the ICMP, UDP or TCP one are
        right (a frame cut short counts as right: nothing to check)."""
        if self.proto is None:
            return True
        ip = self.raw[14:]
        hl = (ip[0] & 15) * 4
        if checksum(ip[:hl]) != 0:
            return False
        body = self.body
        if self.proto == PROTO_ICMP:
            return checksum(body) == 0
        if self.proto == PROTO_UDP and len(body) >= 8 and body[6:8] == b"\0\0":
            return True                         # UDP without a checksum
        if self.proto in (PROTO_UDP, PROTO_TCP):
            return checksum(pseudo(self.src, self.dst, self.proto, len(body)) + body) == 0
        return True

    def icmp(self):
        """(type, code, id, seq, data) or None."""
        if self.proto != PROTO_ICMP or len(self.body) < 8:
            return None
        t, c, _, i, s = struct.unpack("!BBHHH", self.body[:8])
        return t, c, i, s, self.body[8:]

    def udp(self):
        """(sport, dport, data) or None."""
        if self.proto != PROTO_UDP or len(self.body) < 8:
            return None
        sp, dp = struct.unpack("!HH", self.body[:4])
        return sp, dp, self.body[8:]

    def sack_blocks(self):
        """The SACK blocks of a TCP segment, [(start, end), ...] in order."""
        v = tcp_options(self.body).get(5, b"") if self.proto == PROTO_TCP else b""
        return [struct.unpack("!II", v[i:i + 8]) for i in range(0, len(v) - 7, 8)]

    def tcp(self):
        """(sport, dport, seq, ack, flags, window, data) or None."""
        if self.proto != PROTO_TCP or len(self.body) < 20:
            return None
        sp, dp, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", self.body[:16])
        return sp, dp, seq, ack, flags, win, self.body[(off >> 4) * 4:]


class Wire:
    """This process as every host of the segment but Tempest."""

    def __init__(self, tempest_end):
        """tempest_end: Tempest's end of the segment (tempest.Segment);
        this process takes the other."""
        me = tempest_end.other_end()
        self.mac, self.ip = mac_bytes(me.mac), ip_bytes(me.ip)
        self.tempest_mac = mac_bytes(tempest_end.mac)
        self.tempest_ip = ip_bytes(tempest_end.ip)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", me.local))
        self.sock.settimeout(0.2)
        self.dest = ("127.0.0.1", me.remote)
        self.frames = queue.Queue()
        self.arp_replies = 0
        self.sent = 0
        self.received = 0
        self.bad_sums = []              # frames from Tempest with a wrong checksum
        self.stopping = False
        self.thread = threading.Thread(target=self.read, name="frames-wire", daemon=True)
        self.thread.start()

    def close(self):
        self.stopping = True
        self.thread.join(2)
        self.sock.close()

    # ---- sending ----

    def send_raw(self, frame, gap=0.0):
        self.sock.sendto(frame, self.dest)
        self.sent += 1
        if gap:
            time.sleep(gap)

    def send_ip(self, packet, src_mac=None, gap=0.002):
        """An IPv4 packet to Tempest."""
        self.send_raw(eth(self.tempest_mac, src_mac or self.mac, ETH_IP, packet), gap)

    # ---- receiving ----

    def read(self):
        while not self.stopping:
            try:
                raw = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            f = Frame(raw)
            if f.kind == ETH_ARP and len(raw) >= 42:
                self.answer_arp(raw)
            elif f.kind == ETH_IP:
                self.received += 1
                if not f.sums_ok():
                    self.bad_sums.append(raw)
                self.frames.put(f)

    def answer_arp(self, raw):
        op = struct.unpack("!H", raw[20:22])[0]
        sha, spa, tpa = raw[22:28], raw[28:32], raw[38:42]
        if op == 1 and tpa != self.tempest_ip and tpa[:3] == self.tempest_ip[:3]:
            self.arp_replies += 1
            self.send_raw(eth(sha, self.mac, ETH_ARP, arp(2, self.mac, tpa, sha, spa)))

    def expect(self, want, timeout):
        """The first frame for which want(frame) is true within timeout
        seconds (the others are let go), or None."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                f = self.frames.get(timeout=left)
            except queue.Empty:
                return None
            if want(f):
                return f

    def drain(self, seconds=0.0):
        """Let go of every frame queued, after waiting seconds."""
        if seconds:
            time.sleep(seconds)
        while True:
            try:
                self.frames.get_nowait()
            except queue.Empty:
                return

    def collect(self, want, seconds):
        """Every frame for which want(frame) is true in seconds."""
        got, end = [], time.monotonic() + seconds
        while True:
            f = self.expect(want, end - time.monotonic())
            if f is None:
                return got
            got.append(f)

    # ---- ICMP ----

    def ping(self, ident, seq, data=b"frames", timeout=3.0):
        """One echo request; true when its reply came."""
        self.send_ip(ipv4(self.ip, self.tempest_ip, PROTO_ICMP, icmp_echo(ident, seq, data),
                          ident=random.randrange(65536)))
        return self.expect(lambda f: f.icmp() is not None and f.icmp()[0] == 0
                           and f.icmp()[2:4] == (ident, seq), timeout) is not None

    def alive(self, ident, tries=5):
        """Tempest answers a ping (several tries: a reply lost behind a
        burst is not a death)."""
        return any(self.ping(ident, seq) for seq in range(tries))


class Conn:
    """One TCP connection made by hand from src:sport (src one of the
    segment's addresses this process answers for) to Tempest's port."""

    def __init__(self, wire, dport, sport=None, src=None, syn_options=None):
        self.w = wire
        self.syn_options = mss_option() if syn_options is None else syn_options
        self.src = src or wire.ip
        self.sport = sport or random.randrange(20000, 60000)
        self.dport = dport
        self.iss = random.randrange(1 << 32)
        self.snd_nxt = self.iss
        self.rcv_nxt = None
        self.received = b""
        self.peer_window = 0

    def mine(self, f):
        t = f.tcp()
        return t is not None and f.src == self.w.tempest_ip and f.dst == self.src and \
            t[0] == self.dport and t[1] == self.sport

    def segment(self, flags, data=b"", seq=None, ack=None, **kw):
        """Send one segment (seq and ack default to the connection's)."""
        self.w.send_ip(ipv4(self.src, self.w.tempest_ip, PROTO_TCP,
                            tcp(self.src, self.w.tempest_ip, self.sport, self.dport,
                                self.snd_nxt if seq is None else seq,
                                (self.rcv_nxt or 0) if ack is None else ack, flags, data, **kw),
                            ident=random.randrange(65536)))

    def syn(self):
        self.segment(SYN, seq=self.iss, ack=0, options=self.syn_options)

    def open(self, timeout=5.0):
        """The three-way handshake; true when it completed."""
        self.syn()
        f = self.w.expect(lambda f: self.mine(f) and f.tcp()[4] & (SYN | ACK) == SYN | ACK
                          and f.tcp()[3] == (self.iss + 1) & 0xffffffff, timeout)
        if f is None:
            return False
        self.synack = f
        self.snd_nxt = (self.iss + 1) & 0xffffffff
        self.rcv_nxt = (f.tcp()[2] + 1) & 0xffffffff
        self.peer_window = f.tcp()[5]
        self.segment(ACK)
        return True

    def take(self, f):
        """Take f's data if it is the next in order, and acknowledge."""
        _, _, seq, _, flags, _, data = f.tcp()
        if data and seq == self.rcv_nxt:
            self.received += data
            self.rcv_nxt = (self.rcv_nxt + len(data)) & 0xffffffff
        if flags & FIN and (seq + len(data)) & 0xffffffff == self.rcv_nxt:
            self.rcv_nxt = (self.rcv_nxt + 1) & 0xffffffff
        if data or flags & FIN:
            self.segment(ACK)

    def send(self, data):
        self.segment(PSH | ACK, data)
        self.snd_nxt = (self.snd_nxt + len(data)) & 0xffffffff

    def echo(self, data, timeout=10.0):
        """Send data; true when exactly it comes back."""
        start = len(self.received)
        self.send(data)
        return self.echoed(data, start, timeout)

    def echoed(self, data, start, timeout=10.0):
        """True when what came from received[start] on is exactly data."""
        end = time.monotonic() + timeout
        while len(self.received) - start < len(data):
            f = self.w.expect(self.mine, end - time.monotonic())
            if f is None:
                break
            if f.tcp()[4] & RST:
                return False
            self.take(f)
        return self.received[start:] == data

    def acks_seen(self, seconds):
        """The pure ACKs (no data, no RST) Tempest sent in seconds."""
        return [f for f in self.w.collect(self.mine, seconds)
                if not f.tcp()[6] and not f.tcp()[4] & (RST | SYN | FIN)]

    def close(self, timeout=10.0):
        """Our FIN, then Tempest's (echod closes when it reads the end);
        true when both were acknowledged."""
        self.segment(FIN | ACK)
        self.snd_nxt = (self.snd_nxt + 1) & 0xffffffff
        end = time.monotonic() + timeout
        while True:
            f = self.w.expect(self.mine, end - time.monotonic())
            if f is None:
                return False
            self.take(f)
            if f.tcp()[4] & FIN:
                return f.tcp()[3] == self.snd_nxt

    def reset(self):
        self.segment(RST | ACK)
