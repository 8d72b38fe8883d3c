"""The harness of the S5 tool tests (test_s5tools.py, s5_corruption.py):
test registration, checks, running the tools, patching images, and the
runner that prints "PASS name" / "FAIL name: why" and "N passed, N failed"."""
import argparse
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from s5image import *  # noqa: F401,F403 (the format's constants)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# ---------------------------------------------------------------------------
# The harness.

class Ctx:
    pass


CTX = Ctx()
RESULTS = []
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


class Fail(Exception):
    pass


def check(cond, why):
    if not cond:
        raise Fail(why)


def run(args, **kw):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:exitcode=99")
    env.update(kw.pop("env", {}))
    p = subprocess.run(args, capture_output=True, text=True, errors="replace",
                       timeout=120, env=env, **kw)
    check("Sanitizer" not in p.stderr and "runtime error" not in p.stderr,
          "sanitizer report from %s: %s" % (os.path.basename(args[0]), p.stderr[-400:]))
    return p


def mkfs(*args, env=None):
    return run([CTX.mkfs] + [str(a) for a in args], env=env or {})


def fsck(image):
    p = run([CTX.fsck, image])
    CTX.last = p.stdout + p.stderr
    return p


def tmp(name):
    return os.path.join(CTX.tmp, name)


def write_tree(top):
    """The source tree: nested dirs, every size class, links, odd names."""
    rnd = random.Random(5)
    os.makedirs(os.path.join(top, "small/d1/d2/d3"))
    os.makedirs(os.path.join(top, "many"))
    files = {
        "hello.txt": b"hello, world\n",
        "empty": b"",
        "abcdefghijklmn": b"fourteen-character name\n",
        "small/d1/d2/d3/deep.txt": b"deep\n",
        "exact10": bytes(rnd.getrandbits(8) for _ in range(10 * BSIZE)),
        "ind1.bin": bytes(rnd.getrandbits(8) for _ in range(50 * BSIZE + 77)),
        "exact266": bytes(rnd.getrandbits(8) for _ in range(266 * BSIZE)),
        "ind2.bin": bytes(rnd.getrandbits(8) for _ in range(400 * BSIZE + 5)),
        "data.txt": b"linked twice\n" * 100,
    }
    for i in range(100):
        files["many/f%03d" % i] = b"%d\n" % i
    for path, data in files.items():
        with open(os.path.join(top, path), "wb") as fp:
            fp.write(data)
    os.chmod(os.path.join(top, "hello.txt"), 0o600)
    os.chmod(os.path.join(top, "exact10"), 0o4755)
    os.chmod(os.path.join(top, "small/d1"), 0o700)
    os.link(os.path.join(top, "data.txt"), os.path.join(top, "small/data-link"))
    os.symlink("hello.txt", os.path.join(top, "link"))
    os.symlink("small/d1", os.path.join(top, "dirlink"))
    os.mkfifo(os.path.join(top, "fifo"))


def host_walk(top):
    """(relative path, lstat) for everything mkfs should copy."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            if os.path.isdir(p) and not os.path.islink(p) or \
               os.path.islink(p) or os.path.isfile(p):
                out.append((os.path.relpath(p, top), st))
    return out


def good_copy(name):
    path = tmp(name)
    shutil.copyfile(CTX.good, path)
    return path


def patch(path, off, fmt, *vals):
    with open(path, "r+b") as fp:
        fp.seek(off)
        fp.write(struct.pack(fmt, *vals))


def patch_bytes(path, off, data):
    with open(path, "r+b") as fp:
        fp.seek(off)
        fp.write(data)


def set_addr(path, ino, slot, bno):
    patch_bytes(path, CTX.img.ipos(ino) + O_ADDR + 3 * slot, bno.to_bytes(3, "little"))


def expect_bad(path, pattern):
    p = fsck(path)
    check(p.returncode == 1, "fsck exit %d, want 1; output: %s" % (p.returncode, CTX.last[-300:]))
    check(re.search(pattern, p.stdout), "no line matching /%s/ in: %s" % (pattern, p.stdout[-500:]))


# Every corruption function by case name, (path, image) -> None; the
# kernel's corrupted-image boots (tests/fs_check.py) reuse them.
CORRUPTIONS = {}


def corrupt(name, pattern):
    """Registers a test that applies fn to a copy of the good image."""
    def wrap(fn):
        CORRUPTIONS[name] = fn
        def t():
            path = good_copy(name + ".img")
            fn(path, CTX.img)
            expect_bad(path, pattern)
        t.__name__ = "corrupt_" + name
        TESTS.append(t)
        return fn
    return wrap


def file_ino(name):
    return CTX.img.namei(name)


# ---------------------------------------------------------------------------

def main(doc):
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--tools", help="use mkfs.s5/fsck.s5/s5cat from DIR instead of building")
    ap.add_argument("-v", action="store_true", help="print the last tool output on failure")
    args = ap.parse_args()
    CTX.tools = os.path.abspath(args.tools) if args.tools else None
    CTX.sanitized = False
    CTX.last = ""
    CTX.tmp = tempfile.mkdtemp(prefix="s5tools.")
    passed = failed = 0
    try:
        for t in TESTS:
            name = t.__name__
            try:
                t()
                print("PASS " + name)
                passed += 1
            except Exception as e:      # a failed check or a broken step
                why = str(e) if isinstance(e, Fail) else "%s: %s" % (type(e).__name__, e)
                print("FAIL %s: %s" % (name, why.replace("\n", " | ")[:600]))
                if args.v:
                    print(CTX.last)
                failed += 1
            sys.stdout.flush()
    finally:
        shutil.rmtree(CTX.tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
