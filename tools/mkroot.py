#!/usr/bin/env python3
"""Build Tempest's root file system image: an S5 image (tools/mkfs_s5.c)
holding Debian's busybox-static with its applet links, Tempest's init, and
whatever else the caller adds.

    mkroot.py IMAGE [--size 32M] [--init PATH] [--busybox PATH]
              [--bin PROG ...] [--add DIR] [--tests DIR] [--bench DIR]
              [--run 'shell command']

The tree:

    /bin/busybox            Debian's busybox-static, unmodified
    /bin/NAME, /sbin/NAME   symbolic links to /bin/busybox, one per applet
                            (names longer than S5's 14 bytes are left out)
    /sbin/init              Tempest's init (userland/init/init.c)
    /bin/PROG               with --bin PROG: more programs (e.g. lockstat)
    /etc/motd, /etc/passwd, /etc/group
    /etc/rc.run             with --run: the command init runs under /bin/sh
                            before it powers the machine off
    /dev /tmp /home /root   empty (devfs is mounted on /dev)
    /proc /mnt              empty (init mounts procfs on /proc)
    /add                    with --add: a copy of a host directory
    /tests, /bench          with --tests / --bench: test and benchmark programs

Only the Python 3 standard library is used.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MKFS = os.path.join(ROOT, "build", "tools", "mkfs.s5")
BUSYBOX = "/bin/busybox"          # Debian's busybox-static puts it here
S5_DIRSIZ = 14                    # longest S5 file name

PASSWD = "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n"
GROUP = "root:x:0:\nuser:x:1000:\n"
MOTD = "Welcome to Tempest.\n"


def applets(busybox):
    """The applets busybox was built with, each as (directory, name), from
    its own --list-full (e.g. "usr/bin/wc"); usr/ is folded into /."""
    out = subprocess.run([busybox, "--list-full"], check=True, capture_output=True,
                         text=True).stdout
    result = []
    for line in out.split():
        path = line.strip("/")
        if path.startswith("usr/"):
            path = path[4:]
        d, name = os.path.split(path)
        if d in ("bin", "sbin") and name and name != "busybox":
            result.append((d, name))
    return result


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def copy_tree(src, dst):
    """Copy a host directory into the staging tree; symbolic links stay
    links, and every file keeps its permission bits."""
    shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)


def stage(tmp, args):
    """Lay out the root tree under tmp/root and return its path."""
    top = os.path.join(tmp, "root")
    for d in ("bin", "sbin", "etc", "dev", "tmp", "home/user", "root"):
        os.makedirs(os.path.join(top, d), exist_ok=True)
    os.chmod(os.path.join(top, "tmp"), 0o1777)
    shutil.copy2(args.busybox, os.path.join(top, "bin", "busybox"))
    os.chmod(os.path.join(top, "bin", "busybox"), 0o755)
    for d, name in applets(args.busybox):
        if len(name) > S5_DIRSIZ:
            continue
        link = os.path.join(top, d, name)
        if not os.path.lexists(link):
            os.symlink("/bin/busybox", link)
    for prog in args.bin:
        dst = os.path.join(top, "bin", os.path.basename(prog))
        if os.path.lexists(dst):
            os.remove(dst)
        shutil.copy2(prog, dst)
        os.chmod(dst, 0o755)
    if args.init:
        if os.path.lexists(os.path.join(top, "sbin", "init")):
            os.remove(os.path.join(top, "sbin", "init"))
        shutil.copy2(args.init, os.path.join(top, "sbin", "init"))
        os.chmod(os.path.join(top, "sbin", "init"), 0o755)
    write(os.path.join(top, "etc", "motd"), MOTD)
    write(os.path.join(top, "etc", "passwd"), PASSWD)
    write(os.path.join(top, "etc", "group"), GROUP)
    if args.run is not None:
        write(os.path.join(top, "etc", "rc.run"), args.run + "\n", 0o755)
    for opt, where in ((args.add, "add"), (args.tests, "tests"), (args.bench, "bench")):
        if opt:
            copy_tree(opt, os.path.join(top, where))
    for d in ("proc", "mnt"):       # init mounts /proc; /mnt for a user's disks
        os.makedirs(os.path.join(top, d), exist_ok=True)
    return top


def build(image, args):
    if not os.path.exists(MKFS):
        sys.exit("mkroot: %s is missing (run 'make tools')" % MKFS)
    with tempfile.TemporaryDirectory(prefix="mkroot-") as tmp:
        top = stage(tmp, args)
        env = dict(os.environ, SOURCE_DATE_EPOCH=os.environ.get("SOURCE_DATE_EPOCH", "1704067200"))
        r = subprocess.run([MKFS, "-d", top, image, args.size], capture_output=True,
                           text=True, env=env)
        if r.returncode != 0:
            sys.exit("mkroot: mkfs.s5 failed: %s" % (r.stdout + r.stderr)[-500:])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("image")
    p.add_argument("--size", default="32M")
    p.add_argument("--busybox", default=BUSYBOX)
    p.add_argument("--init", help="the init program (static)")
    p.add_argument("--bin", action="append", default=[], help="a program copied to /bin")
    p.add_argument("--add", help="host directory copied to /add")
    p.add_argument("--tests", help="host directory copied to /tests")
    p.add_argument("--bench", help="host directory copied to /bench")
    p.add_argument("--run", help="command init runs under /bin/sh, then powers off")
    args = p.parse_args()
    build(args.image, args)


if __name__ == "__main__":
    main()
