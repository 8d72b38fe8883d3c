"""The file-system peer checks' model (tests/test_fs_peer.py): a tree of
files kept in Python while the same operations are written out as a busybox
shell script, so that what a kernel made of the script can be compared with
what the operations must have made.  Also the script that lists a tree (the
manifest) and the parser of its output, the same on Tempest and on Linux.

A workload is a list of shell lines; every operation appends one line and
changes the model.  Contents come from printf (short text) or from dd out
of the pattern file /add/pat that the root image carries (big files), so
the model knows every byte.  Names avoid spaces and quotes."""

import hashlib
import random
import re

PATTERN_BLOCKS = 2048                   # /add/pat: 2 MiB of pseudo-random bytes


def pattern():
    """The bytes of /add/pat."""
    return random.Random(13).randbytes(PATTERN_BLOCKS * 1024)


class Node:
    """A file, directory, symbolic link, device or FIFO.  Hard links are
    several paths naming one Node."""

    def __init__(self, kind, perm, data=b"", target="", rdev=(0, 0)):
        self.kind, self.perm = kind, perm
        self.data, self.target, self.rdev = data, target, rdev


class Workload:
    """The model tree (path -> Node, paths relative to the file system's
    top) and the shell lines that make it."""

    def __init__(self, pat, pat_path="/add/pat"):
        self.pat = pat
        self.pat_path = pat_path            # where the script finds the pattern file
        self.nodes = {}
        self.lines = []

    # -- the shell side -------------------------------------------------

    def sh(self, line):
        n = len(self.lines) + 1
        self.lines.append("%s || echo 'peer-op-failed %d: %s'" % (line, n, line.replace("'", "")))

    def script(self):
        return "\n".join(self.lines) + "\n"

    # -- operations -------------------------------------------------------

    def mkdir(self, path, perm=0o755):
        self.sh("mkdir %s" % path)
        self.nodes[path] = Node("d", perm)

    def text(self, path, body):
        """A file holding body (text without quotes or backslashes)."""
        self.sh("printf '%%s' '%s' > %s" % (body, path))
        self._set_data(path, body.encode())

    def append(self, path, body):
        self.sh("printf '%%s' '%s' >> %s" % (body, path))
        self.nodes[path].data += body.encode()

    def from_pattern(self, path, skip, count, tail=""):
        """A file of count KiB of the pattern from KiB skip, then tail."""
        self.sh("dd if=%s of=%s bs=1024 skip=%d count=%d 2>/dev/null"
                % (self.pat_path, path, skip, count))
        data = self.pat[skip * 1024:(skip + count) * 1024]
        if tail:
            self.sh("printf '%%s' '%s' >> %s" % (tail, path))
            data += tail.encode()
        self._set_data(path, data)

    def sparse(self, path, seek, skip, count):
        """A new file with a hole of seek KiB, then count KiB of the pattern
        from KiB skip."""
        self.sh("dd if=%s of=%s bs=1024 seek=%d skip=%d count=%d 2>/dev/null"
                % (self.pat_path, path, seek, skip, count))
        self._set_data(path, bytes(seek * 1024) + self.pat[skip * 1024:(skip + count) * 1024])

    def _set_data(self, path, data):
        node = self.nodes.get(path)
        if node is None:
            self.nodes[path] = Node("f", 0o644, data)
        else:
            node.data = data                # the same inode, truncated and rewritten

    def truncate(self, path, size):
        self.sh("truncate -s %d %s" % (size, path))
        node = self.nodes[path]
        node.data = node.data[:size] + bytes(max(0, size - len(node.data)))

    def chmod(self, path, perm):
        self.sh("chmod %o %s" % (perm, path))
        self.nodes[path].perm = perm

    def link(self, src, dst):
        self.sh("ln %s %s" % (src, dst))
        self.nodes[dst] = self.nodes[src]

    def symlink(self, target, path):
        self.sh("ln -s %s %s" % (target, path))
        self.nodes[path] = Node("l", 0o777, target=target)

    def mknod(self, path, major, minor):
        self.sh("mknod %s c %d %d" % (path, major, minor))
        self.nodes[path] = Node("c", 0o644, rdev=(major, minor))

    def mkfifo(self, path):
        self.sh("mkfifo %s" % path)
        self.nodes[path] = Node("p", 0o644)

    def rename(self, src, dst):
        """mv src dst; dst is new, or a file that src replaces."""
        self.sh("mv %s %s" % (src, dst))
        for p in sorted(self.nodes):
            if p == src or p.startswith(src + "/"):
                self.nodes[dst + p[len(src):]] = self.nodes.pop(p)

    def remove(self, path):
        self.sh("rm %s" % path)
        del self.nodes[path]

    def remove_tree(self, path):
        self.sh("rm -r %s" % path)
        for p in [p for p in self.nodes if p == path or p.startswith(path + "/")]:
            del self.nodes[p]

    # -- what a listing must show ---------------------------------------

    def snapshot(self, tops):
        """(expected, link_groups) of the tree as it is now."""
        return self.expected(tops), self.link_groups(tops)

    def expected(self, tops):
        """{path: fields} for every path under the directories tops, in the
        form parse_manifest gives (dir sizes, inode numbers and times are
        not the model's; they are compared between systems instead)."""
        out = {}
        for top in tops:
            for p, node in self.nodes.items():
                if p == top or p.startswith(top + "/"):
                    out[p] = self._fields(p, node)
        return out

    def _fields(self, path, node):
        f = {"kind": node.kind, "perm": node.perm, "uid": 0, "gid": 0}
        if node.kind == "f":
            f["size"] = len(node.data)
            f["md5"] = hashlib.md5(node.data).hexdigest()
            f["nlink"] = sum(1 for n in self.nodes.values() if n is node)
        elif node.kind == "d":
            f["nlink"] = 2 + sum(1 for p, n in self.nodes.items()
                                 if n.kind == "d" and p.rsplit("/", 1)[0] == path
                                 and "/" in p)
        elif node.kind == "l":
            f["size"] = len(node.target)
            f["target"] = node.target
            f["nlink"] = 1
        else:
            f["size"] = 0
            f["nlink"] = 1
            if node.kind == "c":
                f["rdev"] = node.rdev
        return f

    def link_groups(self, tops):
        """Sets of paths (under tops) that name one file."""
        groups = {}
        for p, node in self.nodes.items():
            if node.kind == "f" and any(p == t or p.startswith(t + "/") for t in tops):
                groups.setdefault(id(node), set()).add(p)
        return [g for g in groups.values() if len(g) > 1]


# --------------------------------------------------------------------------
# The listing, run by busybox on either system from the file system's top.

MANIFEST_BEGIN = "@@manifest %s begin@@"
MANIFEST_END = "@@manifest %s end@@"


def manifest_script(tag, tops):
    """Shell lines printing every path under tops: a stat line each
    (S|name|type|size|mode|links|inode|uid|gid|mtime|major|minor), the md5
    of each regular file and each symbolic link's target."""
    tops = " ".join(tops)
    return "\n".join([
        "echo '%s'" % (MANIFEST_BEGIN % tag),
        "find %s | sort | xargs stat -c 'S|%%n|%%F|%%s|%%a|%%h|%%i|%%u|%%g|%%Y|%%t|%%T'" % tops,
        "find %s -type f | sort | xargs md5sum" % tops,
        "find %s -type l | sort | xargs stat -c 'L|%%N'" % tops,
        "echo '%s'" % (MANIFEST_END % tag),
    ]) + "\n"


KINDS = {"regular file": "f", "regular empty file": "f", "directory": "d",
         "symbolic link": "l", "character special file": "c", "fifo": "p"}


def parse_manifest(output, tag):
    """{path: fields} from a listing in a console, or None if it is not
    there.  Fields: kind, size, perm, nlink, ino, uid, gid, mtime, and md5,
    target or rdev by kind."""
    begin, end = MANIFEST_BEGIN % tag, MANIFEST_END % tag
    if begin not in output or end not in output:
        return None
    body = output[output.index(begin) + len(begin):output.index(end)]
    out = {}
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("S|"):
            _, name, kind, size, perm, nlink, ino, uid, gid, mtime, major, minor = line.split("|")
            f = {"kind": KINDS.get(kind, kind), "size": int(size), "perm": int(perm, 8),
                 "nlink": int(nlink), "ino": int(ino), "uid": int(uid), "gid": int(gid),
                 "mtime": int(mtime)}
            if f["kind"] == "c":
                f["rdev"] = (int(major, 16), int(minor, 16))
            out[name] = f
        elif line.startswith("L|"):
            m = re.match(r"^L\|'(.*)' -> '(.*)'$", line)
            if m and m.group(1) in out:
                out[m.group(1)]["target"] = m.group(2)
        else:
            m = re.match(r"^([0-9a-f]{32})  (\S+)$", line)
            if m and m.group(2) in out:
                out[m.group(2)]["md5"] = m.group(1)
    return out


def differences(got, want, limit=6):
    """Short descriptions of how listing got differs from the model's
    want (only the fields want has)."""
    out = []
    for p in sorted(set(want) - set(got)):
        out.append("%s missing" % p)
    for p in sorted(set(got) - set(want)):
        out.append("%s unexpected" % p)
    for p in sorted(set(got) & set(want)):
        for k, v in sorted(want[p].items()):
            if got[p].get(k) != v:
                out.append("%s: %s %r, want %r" % (p, k, got[p].get(k), v))
    if len(out) > limit:
        out = out[:limit] + ["... %d more" % (len(out) - limit)]
    return out


def same_view(a, b, limit=6):
    """How two systems' listings of one state differ in what the model
    does not know: inode numbers, modification times, directory sizes."""
    out = []
    for p in sorted(set(a) & set(b)):
        for k in ("ino", "mtime", "size"):
            if a[p].get(k) != b[p].get(k):
                out.append("%s: %s %r vs %r" % (p, k, a[p].get(k), b[p].get(k)))
    if set(a) != set(b):
        out.append("the listings name different paths")
    if len(out) > limit:
        out = out[:limit] + ["... %d more" % (len(out) - limit)]
    return out


def link_problems(got, groups):
    """Hard-link groups of the model that do not share one inode number,
    and distinct files that do."""
    out = []
    for g in groups:
        inos = {got[p]["ino"] for p in g if p in got}
        if len(inos) != 1:
            out.append("%s: inode numbers %s, want one" % (sorted(g), sorted(inos)))
    linked = {p for g in groups for p in g}
    seen = {}
    for p, f in got.items():
        if f["kind"] == "f" and p not in linked:
            if f["ino"] in seen:
                out.append("%s and %s share inode %d" % (seen[f["ino"]], p, f["ino"]))
            seen[f["ino"]] = p
    return out
