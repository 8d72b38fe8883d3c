"""Debian's toolchain inside Tempest, for tests/check.py.

  debian/s5   tools/debian_s5_bundle.py copies Debian's gcc, cc1, as, ld
              and make (unmodified but for their interpreter, search path
              and too-long library names) with glibc onto an S5 root
              under /add; inside Tempest, userland/tests/debian/run.sh
              compiles, assembles and links a hello world and runs it,
              then builds a three-file project with `make -j4`, runs it,
              and finds it up to date the second time.  Each step's output
              and status are checked.

  debian/ufs  the Debian root itself (make run USERLAND=debian: Debian's
              packages, unmodified, on a UFS root), one boot: with
              userland/tests/debian/ under /add (native.mk its Makefile),
              docs/debian.md's `cd /src && make -j8 && ./prog`, then native.sh has Debian's
              gcc (driver, cc1, as, collect2, ld) build a hello world,
              dynamic and -static, and the three-file project with
              `make -j4`, runs them, then execs a program whose
              interpreter is missing (ENOENT), one whose interpreter is
              not ELF (ELIBBAD) and one whose library is missing (ld.so's
              own message, status 127), and Debian's python3 passes "hi"
              over a socketpair and reads a child's output through a
              pipe, Debian's numactl shows the preset's nodes, CPUs
              and distances as numactl does on the Linux peer
              (debian/ufs/numactl; and as the preset says:
              debian/ufs/numactl/known) and runs a program under
              --membind, its
              --membind and --interleave place a program's pages and
              migratepages moves them (numa_maps and /proc/vmstat's
              pgmigrate_success say so), Python's pty module runs a child on a pseudo-terminal, and
              Debian's gdb breaks in a program Debian's gcc built there,
              backtraces, steps, prints and finishes, each line as
              the known one (debian/ufs/gdb/known) and as on the peer
              (debian/ufs/gdb); Debian's strace -ff of a busybox pipeline lists,
              process by process, the calls Debian's strace lists on
              the Linux peer (the same tree, chrooted on ext4) and the
              host Linux's strace for the same static busybox
              (debian/ufs/strace, debian/ufs/strace/host).  Then the
              user tests (userland/tests/t_*.c) built with Debian's gcc
              against glibc, dynamic, run on the host and inside Tempest:
              each must pass in both (a representative set; all of them
              with make check-long, job debian/ufs/long).  The image is
              kept (ROOT=), and a second boot with another command in its
              slot finds the program built and up to date; a third
              types poweroff with a process in the background: exit
              status 0 at once (debian/ufs/shutdown).

  debian/gaede  make run USERLAND=debian GAEDE=1: the benchmarks, GAEDE's
              home disk and pmake's sources are there, and two GAEDE users
              run their scripts for five seconds by hand, none failing.

The Debian packages are fetched once into build/debian/ (the network is
needed the first time); the bundle is made anew each run.
"""

import os
import re
import shutil
import glob
import subprocess
import sys
import tempfile

from checklib import T_USER, budget_gone
import run_check
import user_check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import cmdslot  # noqa: E402
import linux_peer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLE = os.path.join(ROOT, "tools", "debian_s5_bundle.py")
WANT = b"""cc 0
ld 0
hello from Debian's gcc
hello 0
make 0
square 7 = 49, cube 3 = 27
prog 0
make: 'prog' is up to date.
again 0
"""


def make_bundle(dest):
    """'' or why the bundle could not be made."""
    r = subprocess.run([sys.executable, BUNDLE, dest], capture_output=True, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        return lines[-1] if lines else "debian_s5_bundle.py failed"
    return ""


def job_debian_s5(ctx):
    tmp = tempfile.mkdtemp(prefix="tempest-debian-", dir=os.path.join(ROOT, "build"))
    try:
        bundle = os.path.join(tmp, "add")
        why = make_bundle(bundle)
        if why:
            ctx.results.add("debian/s5", False, why)
            return
        limit = ctx.limit(T_USER)
        if limit < 30:
            return budget_gone(ctx, ["debian/s5"])
        status, out, err = run_check.userrun(["--add", bundle, "--free", "32M"], limit,
                                             run="sh /add/run.sh")
        ok = status == 0 and out == WANT
        ctx.results.add("debian/s5", ok, "" if ok else "exit %s, stdout %r (%s)"
                        % (status, out[-300:], err.strip().splitlines()[-1:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- debian/ufs: the Debian root ----

PROJECT = os.path.join(ROOT, "userland", "tests", "debian")
USERLIB = os.path.join(ROOT, "userland", "lib")
WANT_NATIVE = b"""square 7 = 49, cube 3 = 27
src 0
gcc 0
hello from Debian's gcc
hello 0
gcc-static 0
hello from Debian's gcc
hello-static 0
interp 1 0
make 0
square 7 = 49, cube 3 = 27
prog 0
make: 'prog' is up to date.
again 0
no-interp ENOENT
bad-interp ELIBBAD
square 7 = 49, cube 3 = 27
needs-lib 0
no-lib 127
./needs-lib: error while loading shared libraries: libsquare.so: cannot open shared object file: No such file or directory
b'hi'
b'sub\\n'
N1=64
N0=32 N1=32
N0=64
N1=64
pgmigrate 1
b'child on /dev/pts/N\\r\\nname? world\\r\\nhello world\\r\\n' 3
"""
NATIVE_END = "usertest: native done"
# User tests that cannot pass as dynamic glibc programs, with the reason;
# they are not built.
GLIBC_GAPS = {
    "t_interp": "makes programs whose interpreter is the test itself, which must be static",
    "t_chroot": "runs itself in a chroot that holds no glibc libraries",
    "t_mremap": "expects unmapped space after its mappings, where glibc's libraries may lie",
}
# The set make check runs (the whole suite with make check-long).
GLIBC_SMALL = ("t_fileio", "t_proc", "t_mem", "t_signal", "t_ldmap", "t_txtbsy", "t_avx",
               "t_time", "t_fd")


def glibc_test_names(small):
    names = sorted(os.path.basename(p)[:-2]
                   for p in glob.glob(os.path.join(ROOT, "userland", "tests", "t_*.c")))
    names = [n for n in names if n not in GLIBC_GAPS]
    return [n for n in names if n in GLIBC_SMALL] if small else names


def build_glibc_tests(dest, names):
    """Build each user test with the host's gcc (Debian's gcc-12) against
    glibc, dynamic, into dest; '' or why one could not be built."""
    os.makedirs(dest, exist_ok=True)
    for n in names:
        src = os.path.join(ROOT, "userland", "tests", n + ".c")
        r = subprocess.run(["gcc", "-O2", "-std=gnu11", "-I", USERLIB, "-o", os.path.join(dest, n),
                            src, os.path.join(USERLIB, "ut.c")], capture_output=True, text=True)
        if r.returncode != 0:
            lines = (r.stderr or "gcc failed").strip().splitlines()
            return "gcc cannot build %s against glibc: %s" % (n, lines[0])
    return ""


def host_results(dest, names):
    """{name: (ok, why)} of each glibc test run on the host's Linux."""
    results = {}
    for n in names:
        work = tempfile.mkdtemp(prefix="glibc-test-", dir=os.path.dirname(dest))
        try:
            r = subprocess.run([os.path.join(dest, n)], cwd=work, capture_output=True,
                               timeout=120, env=dict(os.environ, TMPDIR=work, LC_ALL="C"),
                               start_new_session=True)
            out = r.stdout.decode("utf-8", "replace")
            summ = user_check.SUMMARY_RE.findall(out)
            ok = r.returncode == 0 and bool(summ) and summ[-1][1] == "0"
            results[n] = (ok, "" if ok else "on the host: status %d, %s" % (
                r.returncode, " | ".join(l for l in out.splitlines() if l.startswith("FAIL"))[:200]))
        except subprocess.TimeoutExpired:
            results[n] = (False, "on the host: did not end in 120 s")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return results


def native_script(names):
    """docs/debian.md's command (its Makefile is native.mk), native.sh, then each
    glibc test from /tmp, bracketed as user_check's."""
    cmds = [(n, "/add/glibc/" + n) for n in names]
    return "(cd /src && make -j8 > /dev/null && ./prog); echo \"src $?\"\n" \
        "sh /add/native.sh; echo '%s'\n%s" % (NATIVE_END, user_check.run_script(cmds))


# numa.sh's block on the default preset (2 nodes of 2 CPUs, distances 10/20).
WANT_NUMACTL = b"""available: 2 nodes (0-1)
node 0 cpus: 0 1
node 1 cpus: 2 3
node distances:
node   0   1 \n  0:  10  20 \n  1:  20  10 \npolicy: bind
cpubind: 0 \nmembind: 1 \n"""
NUMACTL_BEGIN, NUMACTL_END = b"numactl-begin\n", b"numactl-end\n"
# gdb.sh's block (the program's line numbers are debugee's, in gdb.sh).
WANT_GDB = b"""Breakpoint 1 at ADDR: file debugee.c, line 8.
Breakpoint 1, square (x=7) at debugee.c:8
8\t    int y = x * x;
#0  square (x=7) at debugee.c:8
#1  ADDR in main () at debugee.c:15
$1 = 7
9\t    return y;
$2 = 49
15\t    int s = square(n);
Value returned is $3 = 49
s=49
[Inferior 1 (process N) exited normally]
gdb 0
"""
GDB_BEGIN, GDB_END = b"gdb-begin\n", b"gdb-end\n"
STRACE_BEGIN, STRACE_END = b"strace-begin\n", b"strace-end\n"
# What the peer runs too (in PROJECT), and the block each prints.
PEER_BLOCKS = (("numactl", "numa.sh", NUMACTL_BEGIN, NUMACTL_END),
               ("gdb", "gdb.sh", GDB_BEGIN, GDB_END),
               ("strace", "strace.sh", STRACE_BEGIN, STRACE_END))


def split_block(text, begin, end):
    """text without the block between the markers begin and end, and the
    block (b'' when there is none)."""
    if begin not in text:
        return text, b""
    head, rest = text.split(begin, 1)
    block, _, tail = rest.partition(end)
    return head + tail, block


def judge_native(out, results, limit):
    native = out.split(NATIVE_END.encode())[0]
    native, traced = split_block(native, STRACE_BEGIN, STRACE_END)
    native, numa = split_block(native, NUMACTL_BEGIN, NUMACTL_END)
    native, gdb = split_block(native, GDB_BEGIN, GDB_END)
    ok = native == WANT_NATIVE
    results.add("debian/ufs/native", ok, "" if ok else "stdout %r" % native[-400:])
    for name, got, known in (("numactl", numa, WANT_NUMACTL), ("gdb", gdb, WANT_GDB)):
        ok = got == known
        results.add("debian/ufs/%s/known" % name, ok, "" if ok else "printed %r" % got)
    peer, why = peer_blocks(limit)
    for name, got in (("numactl", numa), ("gdb", gdb)):
        if peer is None:
            results.add("debian/ufs/" + name, False, why)
            continue
        ok = got == peer[name]
        results.add("debian/ufs/" + name, ok,
                    "" if ok else "Tempest %r, the Linux peer %r" % (got, peer[name]))
    if peer is None:
        results.add("debian/ufs/strace", False, why)
    judge_strace(traced, peer["strace"] if peer else None, results)


# ---- strace: Debian's, inside Tempest, against the Linux peer's and the host's ----

STRACE_PIPELINE = "{bb} echo hello | {bb} tr a-z A-Z"     # run by busybox sh
STRACE_CALL_RE = re.compile(r"^([a-z_0-9]+)\(")
# Calls a signal's timing adds or repeats; they say nothing of the ABI.
STRACE_TIMING = {"rt_sigreturn", "restart_syscall"}


def call_sequence(trace):
    """One process's strace -ff file as its calls' names, in order: signal
    lines and the calls only timing makes (a wait interrupted and
    restarted, a handler's return) left out, repeats of a call made one."""
    names = []
    for line in trace.splitlines():
        m = STRACE_CALL_RE.match(line)
        if not m or m.group(1) in STRACE_TIMING:
            continue
        if not names or names[-1] != m.group(1):
            names.append(m.group(1))
    return " ".join(names)


def sequences(traces):
    """The processes' call sequences, sorted (pids differ between runs)."""
    return sorted(call_sequence(t) for t in traces)


def host_strace_sequences():
    """The host Linux's strace of the pipeline, on the Debian root's own
    static busybox: (sequences, '') or (None, why not)."""
    busybox = os.path.join(ROOT, "build", "debian", "tree", "bin", "busybox")
    if not shutil.which("strace"):
        return None, "the host has no strace (tools/install-deps.sh installs it)"
    work = tempfile.mkdtemp(prefix="strace-host-", dir=os.path.join(ROOT, "build"))
    try:
        r = subprocess.run(["strace", "-ff", "-o", os.path.join(work, "tr"), busybox, "sh", "-c",
                            STRACE_PIPELINE.format(bb=busybox)], capture_output=True, timeout=60)
        files = sorted(glob.glob(os.path.join(work, "tr.*")))
        if r.returncode != 0 or r.stdout != b"HELLO\n" or not files:
            return None, "the host's strace failed: status %d, %r" % (r.returncode, r.stderr[-200:])
        traces = []
        for path in files:
            with open(path, errors="replace") as f:
                traces.append(f.read())
        return sequences(traces), ""
    except subprocess.TimeoutExpired:
        return None, "the host's strace did not end in 60 s"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def traced_sequences(traced):
    """strace.sh's part of an output: (sequences, '') or (None, why not)."""
    text = traced.decode("utf-8", "replace")
    head, _, body = text.partition("== trace\n")
    if head != "HELLO\nstrace 0\n":
        return None, "strace printed %r" % head[-200:]
    return sequences(body.split("== trace\n")), ""


def peer_blocks(limit):
    """The Linux peer's (default preset) run of PEER_BLOCKS' scripts,
    chrooted in an ext4 image of the same Debian root: ({name: block},
    '') or (None, why not)."""
    script = ""
    for _, name, _, _ in PEER_BLOCKS:
        with open(os.path.join(PROJECT, name)) as f:
            script += f.read() + "\n"
    try:
        r = linux_peer.run_in_debian_root("default", script, timeout=limit, free="16M")
    except (linux_peer.PeerError, OSError) as e:
        return None, "the peer's run: %s" % e
    if r.status != 0:
        return None, "the peer's run: %s" % (r.reason or "exit %s" % r.status)
    out = r.output.encode()
    blocks = {}
    for name, _, begin, end in PEER_BLOCKS:
        _, blocks[name] = split_block(out, begin, end)
    return blocks, ""


def judge_strace(traced, peer_traced, results):
    """Debian's strace -ff inside Tempest saw, process by process, the
    calls Debian's strace sees on the Linux peer (debian/ufs/strace, when
    the peer ran: peer_traced not None), and the host's strace on the
    host's Linux (debian/ufs/strace/host), for the same static busybox."""
    got, why = traced_sequences(traced)
    if got is None:
        results.add("debian/ufs/strace", False, "in Tempest: " + why)
        return
    judges = [("debian/ufs/strace/host", host_strace_sequences())]
    if peer_traced is not None:
        judges.insert(0, ("debian/ufs/strace", traced_sequences(peer_traced)))
    for name, (want, why) in judges:
        if want is None:
            results.add(name, False, why)
            continue
        diff = [g for g in got if g not in want] + [w for w in want if w not in got]
        results.add(name, got == want,
                    "" if got == want else "calls differ from Linux's: %r" % diff[:2])


def make_debian_ufs_job(small):
    name = "debian/ufs" if small else "debian/ufs/long"

    def job(ctx):
        tmp = tempfile.mkdtemp(prefix="tempest-debian-", dir=os.path.join(ROOT, "build"))
        try:
            run_debian_ufs(ctx, tmp, name, small)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return job


def run_debian_ufs(ctx, tmp, name, small):
    add = os.path.join(tmp, "add")
    shutil.copytree(PROJECT, add)
    shutil.copy(os.path.join(PROJECT, "native.mk"), os.path.join(add, "Makefile"))
    names = glibc_test_names(small)
    why = build_glibc_tests(os.path.join(add, "glibc"), names)
    if why:
        ctx.results.add(name + "/native", False, why)
        return
    host = host_results(os.path.join(add, "glibc"), names)
    limit = ctx.limit(T_USER if small else 3 * T_USER)
    if limit < 60:
        return budget_gone(ctx, [name + "/native"])
    script = os.path.join(add, "all.sh")
    with open(script, "w") as f:
        f.write(native_script(names) + "\n")
    kept = os.path.join(tmp, "kept.img")
    status, out, err = run_check.userrun(["--userland", "debian", "--add", add, "--free", "64M",
                                          "--root", kept], limit, run="sh /add/all.sh")
    if status is None or not out:
        ctx.results.add(name + "/native", False, "exit %s (%s)" % (status, err.strip().splitlines()[-1:]))
        return
    judge_native(out, ctx.results, int(limit))
    text = out.decode("utf-8", "replace")
    for n, ok, why in user_check.judge(text, [(n, "") for n in names]):
        h_ok, h_why = host[n]
        ctx.results.add("%s/glibc/%s" % (name, n), ok and h_ok, why or h_why)
    if small:
        check_kept(ctx, kept, name)
        check_shutdown(ctx, kept, name)
        why = slot_refusals(tmp)
        ctx.results.add(name + "/slot", not why, why)


def slot_refusals(tmp):
    """'' or what tools/cmdslot.py got wrong on made-up images: a slot
    between other data is filled in place and nothing else moves; a
    command too long for it, an image with two slots and one with none
    are refused (SlotError), never written."""
    img = os.path.join(tmp, "slot.img")
    before, after = b"\x01" * 5000, b"\x02" * 3000
    with open(img, "wb") as f:
        f.write(before + cmdslot.empty_slot() + after)
    cmdslot.write(img, "echo one")
    with open(img, "rb") as f:
        data = f.read()
    if data != before + cmdslot.fill(b"echo one\n") + after:
        return "the slot was not filled in place"
    for image, command in ((img, "x" * cmdslot.SLOT_SIZE), (img + "2", "true"),
                           (img + "0", "true")):
        if image != img:
            with open(image, "wb") as f:
                f.write(before + (cmdslot.empty_slot() * 2 if image.endswith("2") else b""))
        with open(image, "rb") as f:
            old = f.read()
        try:
            cmdslot.write(image, command)
            return "cmdslot.write(%s, %d bytes) was not refused" % (os.path.basename(image),
                                                                    len(command))
        except cmdslot.SlotError:
            pass
        with open(image, "rb") as f:
            if f.read() != old:
                return "a refused write changed %s" % os.path.basename(image)
    return ""


def check_shutdown(ctx, kept, name):
    """poweroff typed in the Debian root (busybox's, as Debian ships none
    without systemd) shuts down at once, a background process and all:
    exit status 0 and init's line, the command after it never run."""
    limit = ctx.limit(120)
    if limit < 30:
        return budget_gone(ctx, [name + "/shutdown"])
    status, out, err = run_check.userrun(["--userland", "debian", "--root", kept], limit,
                                         run="sleep 100 & poweroff; sleep 30; echo not stopped")
    ok = status == 0 and "init: poweroff" in err.splitlines() and b"not stopped" not in out
    ctx.results.add(name + "/shutdown", ok, "" if ok else "exit %s, stdout %r (%s)"
                    % (status, out[-200:], err.strip().splitlines()[-1:]))


GAEDE_RE = re.compile(rb"^bench gaede users=2 scripts=(\d+) .*failed=0", re.M)


def job_debian_gaede(ctx):
    """make run USERLAND=debian GAEDE=1: /bench/gaede and /bench/pmake on
    the root, pmake's sources mounted on /mnt/pmake, GAEDE's home disk on
    /home/d0 with its scripts, and a short GAEDE run of two users by hand
    finishing scripts with none failed."""
    name = "debian/gaede"
    limit = ctx.limit(300)
    if limit < 60:
        return budget_gone(ctx, [name])
    status, out, err = run_check.userrun(
        ["--userland", "debian", "--gaede"], limit,
        run="ls /bench/gaede /bench/pmake /mnt/pmake/Makefile /home/d0/scripts/edit.sh "
            "> /dev/null && /bench/gaede -u 2 -t 5 -s /home/d0/scripts")
    m = GAEDE_RE.search(out)
    ok = status == 0 and m is not None and int(m.group(1)) > 0
    ctx.results.add(name, ok, "" if ok else "exit %s, stdout %r (%s)"
                    % (status, out[-300:], err.strip().splitlines()[-1:]))


def check_kept(ctx, kept, name):
    """A second boot of the kept image (ROOT=) with another command in its
    slot: the program the first one built is still there and runs."""
    limit = ctx.limit(120)
    if limit < 30:
        return budget_gone(ctx, [name + "/kept"])
    status, out, err = run_check.userrun(["--userland", "debian", "--root", kept], limit,
                                         run="cd /src && ./prog && make -q; echo \"kept $?\"")
    want = b"square 7 = 49, cube 3 = 27\nkept 0\n"
    ok = status == 0 and out == want
    ctx.results.add(name + "/kept", ok, "" if ok else "exit %s, stdout %r (%s)"
                    % (status, out[-200:], err.strip().splitlines()[-1:]))
