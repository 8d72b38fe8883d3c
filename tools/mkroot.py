#!/usr/bin/env python3
"""Build Tempest's root file system image: an S5 image (tools/mkfs_s5.c)
holding Debian's busybox-static with its applet links, Tempest's init, and
whatever else the caller adds.

    mkroot.py IMAGE [--size SIZE | --free 16M] [--init PATH] [--busybox PATH]
              [--bin PROG ...] [--add DIR] [--tests DIR] [--bench DIR]
              [--run 'shell command' | --slot]

The image is as large as its contents need (data, indirect blocks,
directories and inodes) plus --free of free space (default 16M), or
exactly --size.  --slot makes /etc/rc.run an empty command slot of
SLOT_BYTES that `s5cat -w` can later fill in place (a kept image,
`make run ROOT=`; userland/init/init.c runs no empty slot); with --fs ufs
the slot is tools/cmdslot.py's, filled by cmdslot.write.

The tree:

    /bin/busybox            Debian's busybox-static, unmodified
    /bin/NAME, /sbin/NAME   symbolic links to /bin/busybox, one per applet
                            (names longer than S5's 14 bytes are left out)
    /sbin/init              Tempest's init (userland/init/init.c)
    /bin/PROG               with --bin PROG: more programs (e.g. lockstat)
    /etc/motd, /etc/hosts, /etc/passwd, /etc/group, /etc/shadow, /etc/shells
                            the users: root, nobody, user (1000) and
                            user01..user64 (uids 1001..1064, each with its
                            own group and a 0700 home under /home; all in
                            group "users"); every password is "tempest"
                            but nobody's, which is locked
    /bin/su                 a set-user-id copy of busybox, so su works
                            from an ordinary user
    /etc/rc.run             with --run: the command init runs under /bin/sh
                            before it powers the machine off
    /dev /tmp               empty (devfs is mounted on /dev)
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
MKFS_UFS = os.path.join(ROOT, "build", "tools", "mkfs.ufs")
BUSYBOX = "/bin/busybox"          # Debian's busybox-static puts it here
S5_DIRSIZ = 14                    # longest S5 file name
S5_BSIZE = 1024                   # kern/s5/s5_fs.h: block size,
S5_NDADDR, S5_NINDIR = 10, 256    # direct blocks, numbers per indirect block
S5_INOPB, S5_MAXINODES = 16, 65520
S5_MAXBLOCKS = 1 << 24
NO_COMMAND = "# tempest: no command\n"   # an empty slot (userland/init/init.c)
SLOT_BYTES = 8192

NUSERS = 64                       # user01..user64: enough for 64 scripted users
# MD5-crypt of "tempest" (openssl passwd -1 -salt Tempest0 tempest): every
# user's password (nobody's is locked), so su and login can be scripted.
USER_HASH = "$1$Tempest0$SqpNs8vKZa1BoMxUaxPQ61"
NOBODY = 65534
USERS_GID = 100
MOTD = "Welcome to Tempest.\n"


# /etc/hosts of both roots (the Debian one's too: tools/debian_root.py).
HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"


def accounts():
    """The users as (name, uid, gid, home, password hash): root, nobody,
    user and user01..user64."""
    users = [("root", 0, 0, "/root", USER_HASH), ("nobody", NOBODY, NOBODY, "/home/nobody", "!"),
             ("user", 1000, 1000, "/home/user", USER_HASH)]
    for i in range(1, NUSERS + 1):
        users.append(("user%02d" % i, 1000 + i, 1000 + i, "/home/user%02d" % i, USER_HASH))
    return users


def user_files(top):
    """/etc/passwd, group, shadow and shells, and the homes; returns the
    owner lines for mkfs.s5 -o (the homes belong to their users)."""
    users = accounts()
    passwd = "".join("%s:x:%d:%d:%s:%s:/bin/sh\n" % (n, u, g, n, h) for n, u, g, h, _p in users)
    ordinary = [n for n, u, _g, _h, _p in users if 0 < u < NOBODY]
    group = "root:x:0:\nusers:x:%d:%s\nnogroup:x:%d:\n" % (USERS_GID, ",".join(ordinary), NOBODY)
    group += "".join("%s:x:%d:\n" % (n, g) for n, u, g, _h, _p in users if 0 < u < NOBODY)
    shadow = "".join("%s:%s:19700:0:99999:7:::\n" % (n, p) for n, _u, _g, _h, p in users)
    write(os.path.join(top, "etc", "passwd"), passwd)
    write(os.path.join(top, "etc", "group"), group)
    write(os.path.join(top, "etc", "shadow"), shadow, 0o600)
    write(os.path.join(top, "etc", "shells"), "/bin/sh\n/bin/ash\n")
    owners = []
    for n, u, g, home, _p in users:
        os.makedirs(top + home, exist_ok=True)
        os.chmod(top + home, 0o700)
        if u != 0:
            owners.append("%s %d %d" % (home.lstrip("/"), u, g))
    return owners


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
    for d in ("bin", "sbin", "etc", "dev", "tmp", "home", "root"):
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
    write(os.path.join(top, "etc", "hosts"), HOSTS)     # busybox's resolver reads it
    owners = user_files(top)
    su = os.path.join(top, "bin", "su")
    if os.path.lexists(su):
        os.remove(su)
    shutil.copy2(args.busybox, su)
    os.chmod(su, 0o4755)        # set-user-id root: su from an ordinary user
    with open(os.path.join(tmp, "owners"), "w") as f:
        f.write("\n".join(owners) + "\n")
    if args.run is not None:
        write(os.path.join(top, "etc", "rc.run"), args.run + "\n", 0o755)
    elif args.slot and getattr(args, "fs", "s5") == "ufs":
        import cmdslot              # a UFS image's slot is found by its mark
        write(os.path.join(top, "etc", "rc.run"), cmdslot.empty_slot().decode(), 0o755)
    elif args.slot:
        write(os.path.join(top, "etc", "rc.run"),
              NO_COMMAND + "\n" * (SLOT_BYTES - len(NO_COMMAND)), 0o755)
    for opt, where in ((args.add, "add"), (args.tests, "tests"), (args.bench, "bench")):
        if opt:
            copy_tree(opt, os.path.join(top, where))
    for d in ("proc", "mnt"):       # init mounts /proc; /mnt for a user's disks
        os.makedirs(os.path.join(top, d), exist_ok=True)
    return top


def file_blocks(size):
    """Blocks an S5 file of size bytes takes: data and indirect blocks."""
    data = -(-size // S5_BSIZE)
    rest, ind = data - S5_NDADDR, 0
    for level in (1, 2, 3):
        if rest <= 0:
            break
        span = S5_NINDIR ** level
        used = min(rest, span)
        ind += sum(-(-used // S5_NINDIR ** k) for k in range(1, level + 1))
        rest -= span
    return data + ind


def content_size(top):
    """(blocks, inodes) the staged tree needs in S5."""
    blocks, inodes, seen = 0, 2, set()       # the bad-block inode and the root
    for d, dirs, files in os.walk(top):
        blocks += file_blocks((len(dirs) + len(files) + 2) * 16)
        for name in dirs + files:
            path = os.path.join(d, name)
            st = os.lstat(path)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            inodes += 1
            if os.path.islink(path):
                blocks += 1
            elif os.path.isfile(path):
                blocks += file_blocks(st.st_size)
    return blocks, inodes


def parse_kib(text):
    """A size like 16M, 512K, 2G or plain KiB, in KiB; exits on nonsense."""
    units = {"K": 1, "M": 1024, "G": 1024 * 1024}
    t = text.strip().upper()
    try:
        return int(t[:-1]) * units[t[-1]] if t and t[-1] in units else int(t)
    except ValueError:
        sys.exit("mkroot: bad size '%s' (KiB, or with a K, M or G suffix)" % text)


def geometry(top, free):
    """The image's size in KiB and its inode count: the contents plus free
    KiB of free space, and a quarter as many free inodes as free KiB (at
    least 1024)."""
    blocks, inodes = content_size(top)
    inodes = min(S5_MAXINODES, inodes + max(1024, free // 4))
    kib = 2 + -(-inodes // S5_INOPB) + blocks + free
    if kib > S5_MAXBLOCKS:
        sys.exit("mkroot: %d KiB is more than an S5 file system holds (%d KiB)"
                 % (kib, S5_MAXBLOCKS))
    return kib, inodes


def ufs_size(top, free):
    """A UFS image's size in KiB: the S5 estimate of the contents with room
    for fragments, whole blocks and inodes, plus free KiB."""
    blocks, inodes = content_size(top)
    return blocks * 3 // 2 + inodes // 4 + 4096 + free


def build_ufs(image, args):
    """The UFS root (FS=ufs): mkfs.ufs -d of the staged tree."""
    if not os.path.exists(MKFS_UFS):
        sys.exit("mkroot: %s is missing (run 'make tools')" % MKFS_UFS)
    with tempfile.TemporaryDirectory(prefix="mkroot-") as tmp:
        top = stage(tmp, args)
        size = args.size or "%dK" % ufs_size(top, parse_kib(args.free))
        r = subprocess.run([MKFS_UFS, "-d", top, "-o", os.path.join(tmp, "owners"), image, size],
                           capture_output=True, text=True)
        if r.returncode != 0:
            lines = (r.stdout + r.stderr).strip().splitlines()
            sys.exit("mkroot: %s" % (lines[-1] if lines else "mkfs.ufs failed"))


def build(image, args):
    if args.fs == "ufs":
        return build_ufs(image, args)
    if not os.path.exists(MKFS):
        sys.exit("mkroot: %s is missing (run 'make tools')" % MKFS)
    with tempfile.TemporaryDirectory(prefix="mkroot-") as tmp:
        top = stage(tmp, args)
        env = dict(os.environ, SOURCE_DATE_EPOCH=os.environ.get("SOURCE_DATE_EPOCH", "1704067200"))
        if args.size:
            size, inodes = args.size, []
        else:
            kib, n = geometry(top, parse_kib(args.free))
            size, inodes = "%dK" % kib, ["-i", str(n)]
        r = subprocess.run([MKFS, "-d", top, "-o", os.path.join(tmp, "owners")] + inodes
                           + [image, size], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            lines = (r.stdout + r.stderr).strip().splitlines()
            sys.exit("mkroot: %s" % (lines[-1] if lines else "mkfs.s5 failed"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("image")
    p.add_argument("--size", help="the image's whole size (default: the contents plus --free)")
    p.add_argument("--free", default="16M", help="free space beyond the contents (default 16M)")
    p.add_argument("--slot", action="store_true",
                   help="make /etc/rc.run an empty command slot (for a kept image)")
    p.add_argument("--busybox", default=BUSYBOX)
    p.add_argument("--init", help="the init program (static)")
    p.add_argument("--bin", action="append", default=[], help="a program copied to /bin")
    p.add_argument("--add", help="host directory copied to /add")
    p.add_argument("--tests", help="host directory copied to /tests")
    p.add_argument("--bench", help="host directory copied to /bench")
    p.add_argument("--run", help="command init runs under /bin/sh, then powers off")
    p.add_argument("--fs", choices=("s5", "ufs"), default="s5",
                   help="the file system: s5 (mkfs.s5) or ufs (mkfs.ufs; default s5)")
    args = p.parse_args()
    try:
        build(args.image, args)
    except (OSError, subprocess.SubprocessError) as e:
        sys.exit("mkroot: %s" % e)


if __name__ == "__main__":
    main()
