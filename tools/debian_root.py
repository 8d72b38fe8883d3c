#!/usr/bin/env python3
"""Tempest's Debian root: Debian's own programs, unmodified, on a UFS image.

    debian_root.py fetch [--list FILE]
    debian_root.py image IMAGE [--run 'command' | --slot] [--add DIR] [--free 64M]
                           [--list FILE] [--format ufs|ext4]

fetch resolves the packages named in tools/debian/packages (one a line;
"-NAME" leaves one out) with everything they depend on (apt-cache depends:
Depends and Pre-Depends), downloads them with `apt-get download` into
build/debian/debs/ (nothing is installed on the host) and unpacks each with
`dpkg-deb -x` into build/debian/tree/.  A second run with the same list
does nothing: the tree records the list it was made from.

image makes the root image (tools/mkfs.ufs -d): the Debian tree, plus what
Tempest's boot needs on top of it:

    /sbin/init               Tempest's init (build/userland/init)
    /usr/local/bin/lockstat  Tempest's lockstat (build/userland/lockstat)
    /usr/local/bin/kprof     Tempest's kprof (build/userland/kprof)
    /usr/bin/cc, awk ...     the links update-alternatives would make
    /bin/busybox and links   for each busybox applet Debian's packages do
                             not provide (/bin/sh among them: dash's
                             link is made by its install script, not
                             shipped)
    /etc/passwd ...          the users of tools/mkroot.py
    /etc/hosts, nsswitch.conf  localhost's addresses, files before DNS
    /etc/rc.run              with --run: the command init runs, then
                             powers off; with --slot an empty command
                             slot a kept image's runs fill
                             (tools/cmdslot.py)
    /add, /tests             with --add: a host directory (/src links to
                             it); the user tests
    /bench                   the benchmarks (build/bench: gaede, pmake ...)
    /proc /dev /tmp /mnt     empty

and without Debian's documentation and translations (usr/share/doc, man,
info, locale).  --format ext4 makes the same tree an ext4 image (Debian's
mkfs.ext4 -d) for the Linux peer (tools/linux_peer.py run --root), so the
judges run the same programs on both kernels.

Every failure is one line on standard error and exit status 1.
"""

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import mkroot  # noqa: E402  (the users, the busybox applets)
import cmdslot  # noqa: E402  (the command slot of a kept image)

BUILD = os.path.join(ROOT, "build")
CACHE = os.path.join(BUILD, "debian")
DEBS = os.path.join(CACHE, "debs")
TREE = os.path.join(CACHE, "tree")
STAMP = ".tempest-packages"            # in TREE: the list the tree was made from
LIST = os.path.join(ROOT, "tools", "debian", "packages")
MKFS = os.path.join(BUILD, "tools", "mkfs.ufs")
MKE2FS = "mkfs.ext4"                    # the Linux peer's root (--format ext4)
INIT = os.path.join(BUILD, "userland", "init")
LOCKSTAT = os.path.join(BUILD, "userland", "lockstat")
KPROF = os.path.join(BUILD, "userland", "kprof")
BENCH = os.path.join(BUILD, "bench")
TESTS = os.path.join(BUILD, "userland", "tests")
# Not copied to the image: documentation and translations (about 55 MiB).
PRUNED = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale")
# The links Debian's update-alternatives makes when the packages are
# installed (their install scripts do not run here): (link, target).
ALTERNATIVES = (("usr/bin/cc", "gcc"), ("usr/bin/c89", "c89-gcc"), ("usr/bin/c99", "c99-gcc"),
                ("usr/bin/awk", "gawk"), ("usr/bin/nawk", "gawk"))


class Failure(Exception):
    """A failure to report in one line."""


def run(cmd, cwd=None):
    """Run cmd; its standard output, or Failure with its last line."""
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except OSError as e:
        raise Failure("%s: %s" % (cmd[0], e.strerror))
    if r.returncode != 0:
        lines = (r.stderr + r.stdout).strip().splitlines()
        raise Failure("%s failed: %s" % (" ".join(cmd[:2]), lines[-1] if lines else "no message"))
    return r.stdout


def read_list(path):
    """(wanted, left out) package names of the list file."""
    try:
        with open(path) as f:
            lines = [ln.split("#")[0].strip() for ln in f]
    except OSError as e:
        raise Failure("cannot read the package list %s: %s" % (path, e.strerror))
    names = [ln for ln in lines if ln]
    want = [n for n in names if not n.startswith("-")]
    if not want:
        raise Failure("the package list %s names no package" % path)
    return want, {n[1:] for n in names if n.startswith("-")}


def resolve(want, leave_out):
    """Every package wanted and what it depends on, sorted."""
    try:
        out = run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                   "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + want)
    except Failure as e:
        raise Failure("cannot resolve %s (a misspelt name, or run apt-get update): %s"
                      % (" ".join(want[:3]) + (" ..." if len(want) > 3 else ""), e))
    names = set()
    for line in out.splitlines():
        if line.startswith(" ") or line.startswith("<"):
            continue                    # a dependency line, or a virtual package
        name = line.strip().split(":")[0]
        if name and name not in leave_out:
            names.add(name)
    missing = [n for n in want if n not in names and n not in leave_out]
    if missing:
        raise Failure("apt-cache knows no package %s (apt-get update?)" % missing[0])
    return sorted(names)


def deb_of(name):
    """The downloaded .deb of package name, or None."""
    for f in sorted(os.listdir(DEBS)):
        if f.startswith(name + "_") and f.endswith(".deb"):
            return os.path.join(DEBS, f)
    return None


def download(names):
    os.makedirs(DEBS, exist_ok=True)
    todo = [n for n in names if not deb_of(n)]
    if todo:
        print("debian_root: downloading %d packages into %s" % (len(todo), DEBS), file=sys.stderr)
        run(["apt-get", "download"] + todo, cwd=DEBS)
    for n in names:
        if not deb_of(n):
            raise Failure("apt-get download left no .deb for %s" % n)


def stamp_text(names):
    return "\n".join(names) + "\n"


def fetch(list_path):
    """Make build/debian/tree from the list (unless it is up to date); its
    path.  One process at a time (make check runs two Debian jobs at once,
    and on a fresh machine both would fetch): a lock on build/debian/.lock."""
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return fetch_locked(list_path)


def fetch_locked(list_path):
    want, leave_out = read_list(list_path)
    names = resolve(want, leave_out)
    stamp = os.path.join(TREE, STAMP)
    try:
        with open(stamp) as f:
            if f.read() == stamp_text(names):
                return TREE
    except OSError:
        pass
    download(names)
    if os.path.exists(TREE):
        shutil.rmtree(TREE)
    os.makedirs(TREE)
    print("debian_root: unpacking %d packages into %s" % (len(names), TREE), file=sys.stderr)
    for n in names:
        run(["dpkg-deb", "-x", deb_of(n), TREE])
    with open(stamp, "w") as f:
        f.write(stamp_text(names))
    return TREE


# ---- the image ----

def link_tree(src, dst):
    """dst: a copy of src made of hard links (the cache stays untouched as
    long as files are replaced, not written in place)."""
    try:
        subprocess.run(["cp", "-al", src, dst], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise Failure("cp -al %s failed: %s" % (src, e.stderr.strip().splitlines()[-1:]))


def put_file(src, dst, mode=0o755):
    if os.path.lexists(dst):
        os.remove(dst)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(src, dst)
    os.chmod(dst, mode)


def provided(top, name):
    return any(os.path.lexists(os.path.join(top, d, name))
               for d in ("bin", "sbin", "usr/bin", "usr/sbin"))


def add_alternatives(top):
    """The alternatives' links whose target the tree holds."""
    for link, target in ALTERNATIVES:
        path = os.path.join(top, link)
        if os.path.exists(os.path.join(os.path.dirname(path), target)) and not os.path.lexists(path):
            os.symlink(target, path)


def add_busybox(top):
    """Busybox's applets that no Debian package provides, as links."""
    busybox = os.path.join(top, "bin", "busybox")
    if not os.path.exists(busybox):
        raise Failure("the tree has no /bin/busybox (busybox-static left out of the list?)")
    for d, name in mkroot.applets(busybox):
        if not provided(top, name):
            os.symlink("/bin/busybox", os.path.join(top, d, name))


# What a Debian installer writes and no package ships: the loopback names
# (glibc's getaddrinfo("localhost") reads them) and the name-service order.
NSSWITCH = ("passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
            "networks: files\nprotocols: files\nservices: files\n")


def write_net_files(top):
    """/etc/hosts and /etc/nsswitch.conf, unless a package gave them."""
    for name, text in (("hosts", mkroot.HOSTS), ("nsswitch.conf", NSSWITCH)):
        path = os.path.join(top, "etc", name)
        if not os.path.lexists(path):
            mkroot.write(path, text)


def stage(tmp, tree, args, extra=None):
    """The image's tree under tmp; extra(top), if given, adds to it last
    (the macro benchmarks' /bench and mount points: tools/harness/macro.py)."""
    top = os.path.join(tmp, "root")
    link_tree(tree, top)
    os.remove(os.path.join(top, STAMP))
    for d in PRUNED:
        shutil.rmtree(os.path.join(top, d), ignore_errors=True)
    for d in ("bin", "sbin", "etc", "dev", "tmp", "home", "root", "proc", "mnt"):
        os.makedirs(os.path.join(top, d), exist_ok=True)
    os.chmod(os.path.join(top, "tmp"), 0o1777)
    if not os.path.exists(INIT):
        raise Failure("%s is missing (run 'make userland')" % INIT)
    put_file(INIT, os.path.join(top, "sbin", "init"))
    for tool in (LOCKSTAT, KPROF):
        if os.path.exists(tool):
            put_file(tool, os.path.join(top, "usr", "local", "bin", os.path.basename(tool)))
    add_alternatives(top)
    add_busybox(top)
    for name in ("passwd", "group", "shadow", "shells", "motd"):
        path = os.path.join(top, "etc", name)
        if os.path.lexists(path):
            os.remove(path)             # a link into the cache: written anew
    mkroot.write(os.path.join(top, "etc", "motd"), mkroot.MOTD)
    write_net_files(top)
    owners = mkroot.user_files(top)
    with open(os.path.join(tmp, "owners"), "w") as f:
        f.write("\n".join(owners) + "\n")
    rc_run = os.path.join(top, "etc", "rc.run")
    if args.slot:
        with open(rc_run, "wb") as f:
            f.write(cmdslot.empty_slot())
        os.chmod(rc_run, 0o755)
    elif args.run is not None:
        mkroot.write(rc_run, args.run + "\n", 0o755)
    if args.add:
        if not os.path.isdir(args.add):
            raise Failure("--add %s is not a directory" % args.add)
        shutil.copytree(args.add, os.path.join(top, "add"), symlinks=True)
        if not os.path.lexists(os.path.join(top, "src")):
            os.symlink("add", os.path.join(top, "src"))
    if os.path.isdir(TESTS):
        shutil.copytree(TESTS, os.path.join(top, "tests"), symlinks=True)
    if os.path.isdir(BENCH):
        shutil.copytree(BENCH, os.path.join(top, "bench"), symlinks=True)
    if extra:
        extra(top)
    return top


def chown_listed(top, owners):
    """Give the staged paths the owners listed ("path uid gid" a line, the
    file mkfs.ufs -o reads); they are made by stage, never links into the
    cache."""
    with open(owners) as f:
        for line in f:
            if line.strip():
                path, uid, gid = line.split()
                try:
                    os.chown(os.path.join(top, path), int(uid), int(gid))
                except PermissionError:
                    raise Failure("cannot give %s its owner: run as root for --format ext4" % path)


def tree_kib(top):
    total = 0
    for d, dirs, files in os.walk(top):
        total += 4 * (len(dirs) + len(files))   # an inode and a directory entry's share
        for f in files:
            st = os.lstat(os.path.join(d, f))
            total += (st.st_size + 4095) // 4096 * 4
    return total


def image(args, extra=None, quiet=False):
    """The root image args.image (see stage for extra); quiet: no line
    saying its size."""
    tree = fetch(args.list)
    fmt = getattr(args, "format", "ufs")
    if fmt == "ext4" and not shutil.which(MKE2FS):
        raise Failure("%s is missing (Debian's e2fsprogs)" % MKE2FS)
    if fmt != "ext4" and not os.path.exists(MKFS):
        raise Failure("%s is missing (run 'make tools')" % MKFS)
    free = mkroot.parse_kib(args.free)
    with tempfile.TemporaryDirectory(prefix="debian-root-", dir=BUILD) as tmp:
        top = stage(tmp, tree, args, extra)
        owners = os.path.join(tmp, "owners")
        if fmt == "ext4":
            # ext4's inode tables and journal take more than UFS's; mkfs.ext4
            # keeps the staged files' owners, so the homes are given theirs.
            chown_listed(top, owners)
            kib = tree_kib(top) * 3 // 2 + free + 64 * 1024
            if os.path.exists(args.image):
                os.remove(args.image)
            run([MKE2FS, "-q", "-t", "ext4", "-d", top, "-L", "debian", args.image, "%dK" % kib])
        else:
            kib = tree_kib(top) * 5 // 4 + free
            run([MKFS, "-d", top, "-o", owners, args.image, "%dK" % kib])
    if not quiet:
        print("debian_root: %s: %d MiB %s root" % (args.image, kib // 1024, fmt.upper()),
              file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="fetch and unpack the packages into build/debian/tree")
    f.add_argument("--list", default=LIST, help="the package list (default tools/debian/packages)")
    i = sub.add_parser("image", help="make a UFS root image of the tree")
    i.add_argument("image")
    i.add_argument("--list", default=LIST, help="the package list (default tools/debian/packages)")
    i.add_argument("--run", help="command init runs under /bin/sh, then powers off")
    i.add_argument("--slot", action="store_true",
                   help="make /etc/rc.run an empty command slot (tools/cmdslot.py; ROOT=)")
    i.add_argument("--add", help="host directory copied to /add")
    i.add_argument("--free", default="64M", help="free space beyond the contents (default 64M)")
    i.add_argument("--format", default="ufs", choices=("ufs", "ext4"),
                   help="ufs (Tempest's root, default) or ext4 (the Linux peer's: "
                   "tools/linux_peer.py run --root)")
    args = p.parse_args()
    try:
        if args.cmd == "fetch":
            print(fetch(args.list))
        else:
            image(args)
    except Failure as e:
        sys.exit("debian_root: %s" % e)
    except OSError as e:
        sys.exit("debian_root: %s" % e)
    except KeyboardInterrupt:
        sys.exit("debian_root: interrupted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
