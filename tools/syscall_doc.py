#!/usr/bin/env python3
"""The table of Linux's x86-64 system calls and what Tempest does with each.

    syscall_doc.py [--out FILE] [--names HEADER]   write docs/syscalls.md
    syscall_doc.py --check                          are docs/syscalls.md and
                                                    README's counts current?

The implemented calls are read from the kernel's own table
(kern/proc/syscall.c, its S(number, handler) entries); the names of
Linux's calls from the host's <asm/unistd_64.h> (only to write the page:
--check reads them back from the page itself).  A call is "yes", a
"policy" (kern/proc/sys_policy.c and others: it answers, but the feature
behind it is partial or absent, and the page says how), or "ENOSYS"
(counted per number; `lockstat -e` lists a program's).  --check exits 1
with one line per difference when the page and the table disagree, or
when README's sentence of counts ("Of Linux's N x86-64 system calls, ...")
is not the table's, so make check keeps both true (tests/unit/test_source_rules.py).
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "kern", "proc", "syscall.c")
PAGE = os.path.join(ROOT, "docs", "syscalls.md")
HEADER = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"

# Calls that answer without the whole feature: the one-line policy.
POLICY = {
    "capget": "capabilities follow the uid: root has all, others none",
    "restart_syscall": "calls restart by running again: none pending, EINTR",
    "capset": "may keep or drop what the uid gives; EPERM for more",
    "personality": "kept and inherited; no flag changes behaviour",
    "mlock": "nothing is paged out: checks the range and RLIMIT_MEMLOCK",
    "munlock": "checks the range",
    "mlock2": "as mlock",
    "mlockall": "checks the flags and RLIMIT_MEMLOCK",
    "munlockall": "nothing to undo",
    "unshare": "no namespaces: EPERM for a user, EINVAL for root",
    "setns": "no namespace descriptors: EINVAL",
    "fallocate": "EOPNOTSUPP on S5 and UFS, as Linux's sysv and ufs drivers",
    "syncfs": "writes every file system back",
    "sync_file_range": "the file's fsync",
    "readahead": "checks and returns",
    "fadvise64": "advice only: checks and returns",
    "madvise": "advice only",
}

ROW = re.compile(r"^\| (\d+) \| `(\w+)` \| (yes|policy|ENOSYS) \|")


def implemented():
    """The numbers the kernel's table fills."""
    text = open(TABLE).read()
    table = text[text.index("syscall_table[NSYSCALL]"):]
    table = table[:table.index("};")]
    have = {int(n) for n in re.findall(r"S\((\d+),\s*sys_\w+\)", table)}
    # Calls the dispatcher answers before the table (rt_sigreturn).
    return have | {int(n) for n in re.findall(r"if \(nr == (\d+)\)", text)}


def names_from_header(path):
    names = {}
    for line in open(path):
        m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
        if m:
            names[int(m.group(2))] = m.group(1)
    return names


def names_from_page():
    names = {}
    for line in open(PAGE):
        m = ROW.match(line)
        if m:
            names[int(m.group(1))] = m.group(2)
    return names


def status(nr, name, have):
    if nr not in have:
        return "ENOSYS", ""
    if name in POLICY:
        return "policy", POLICY[name]
    return "yes", ""


def render(names, have):
    rows = []
    counts = {"yes": 0, "policy": 0, "ENOSYS": 0}
    for nr in sorted(names):
        st, note = status(nr, names[nr], have)
        counts[st] += 1
        rows.append("| %d | `%s` | %s | %s |" % (nr, names[nr], st, note))
    head = [
        "# System calls",
        "",
        "Linux's x86-64 system calls and what Tempest does with each, made by",
        "`tools/syscall_doc.py` from the kernel's table (`kern/proc/syscall.c`);",
        "`make check` fails when the two disagree.",
        "",
        "- **yes**: implemented with Linux's semantics and errno, checked by the",
        "  user tests (`userland/tests/`) on the host's Linux and in Tempest.",
        "- **policy**: answers, but the feature behind it is partial or absent;",
        "  the note says how (`kern/proc/sys_policy.c` opens with the whole",
        "  policy).  Never ENOSYS where a program would take that as fatal.",
        "- **ENOSYS**: not there yet.  Each is counted per number; `lockstat -e`",
        "  inside Tempest lists the calls a program asked for and did not get.",
        "",
        "%d implemented, %d by policy, %d ENOSYS." % (counts["yes"], counts["policy"],
                                                    counts["ENOSYS"]),
        "",
        "| nr | call | status | note |",
        "|---:|---|---|---|",
    ]
    return "\n".join(head + rows) + "\n"


# README's sentence with the counts (kept true by --check, as the page is).
README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
README_COUNTS = re.compile(r"Of Linux's (\d+) x86-64 system calls,\s+(\d+) are implemented.*?"
                           r"\s(\d+) answer by a\s+stated policy.*?the other (\d+) give\s+ENOSYS",
                           re.S)


def counts_of(names, have):
    counts = {"yes": 0, "policy": 0, "ENOSYS": 0}
    for nr in names:
        counts[status(nr, names[nr], have)[0]] += 1
    return counts


def check_readme(names, have):
    """README's counts against the table's; 0, or 1 with a line said."""
    c = counts_of(names, have)
    want = (len(names), c["yes"], c["policy"], c["ENOSYS"])
    m = README_COUNTS.search(open(README).read())
    got = tuple(int(x) for x in m.groups()) if m else None
    if got == want:
        return 0
    print("README.md: says %s calls (all, implemented, policy, ENOSYS), the table gives %s"
          % (got or "no count of the", want))
    return 1


def check():
    if not os.path.exists(PAGE):
        print("docs/syscalls.md: missing (run tools/syscall_doc.py)")
        return 1
    names = names_from_page()
    have = implemented()
    want = render(names, have)
    got = open(PAGE).read()
    if want == got:
        return check_readme(names, have)
    bad = [nr for nr in sorted(have) if nr not in names]
    for nr in bad:
        print("docs/syscalls.md: call %d is in the kernel's table but not on the page" % nr)
    for line_want, line_got in zip(want.splitlines(), got.splitlines()):
        if line_want != line_got:
            print("docs/syscalls.md: says %r, the table gives %r" % (line_got, line_want))
            break
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare docs/syscalls.md with the table")
    ap.add_argument("--out", default=PAGE, help="where to write the page")
    ap.add_argument("--names", default=HEADER, help="<asm/unistd_64.h> to take the names from")
    args = ap.parse_args()
    if args.check:
        return check()
    if not os.path.exists(args.names):
        print("syscall_doc.py: %s: no such header (linux-libc-dev)" % args.names, file=sys.stderr)
        return 1
    with open(args.out, "w") as f:
        f.write(render(names_from_header(args.names), implemented()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
