"""Sweep files: parsing, checking and expanding them into points.

A sweep file is lines of "KEY VALUE..." ("#" starts a comment):

    name       sprite                   the sweep's name (default: the file's)
    workloads  fork fexec mem cswitch   names from workloads.py
    machines   spur cpus=8,nodes=2,mem=128,dist=10/20   presets or ad hoc
    cpus       1-5                      counts: 1-5, 1,2,4,8, all, max
    options    lock=spin,mcs sched=global,percpu      one option set per
                                        combination; several options
                                        lines add their sets together;
                                        "options default" is the empty set
    kernels    tempest linux            default: tempest; tempest-up is the
                                        uniprocessor build (make UP=1), run
                                        at cpus 1 only (other counts are
                                        left out of its points)
    accel      tcg                      tcg, kvm, icount (default tcg)
    repeats    3                        default 1
    seconds    1                        each user workload's target time
    intervals  0.5                      Tempest: the lock statistics every
                                        SECS seconds too (lockstat -i), as
                                        a series in each record (default: none)
    timeout    600                      seconds per boot before it fails
    users      1n 2n 8                  gaede's user counts: N, or Nn for N
                                        per CPU (default 2n); macro only
    files      12                       pmake and pmakeind: compile that many
                                        of the kernel's C files (default 0:
                                        all); the reduced check's subset

A line "and" starts another block: it begins as a copy of the block
before, its lines replace those keys (an options line in it replaces the
previous block's option sets), and its points join the sweep's.

Every word is checked before anything runs: an unknown key, workload,
option, value, machine, kernel or accelerator is a SweepError naming the
file, the line and the reason.  CPU counts beyond a machine's own are
left out of that machine's points (so "cpus 1-16" over several presets
works), but a machine left with none is an error.
"""

import itertools
import os
import re

from . import workloads as wl

# The option values the kernel takes (kern/lib/options.c's table); the
# order of the keys is the order of an option set's name.
OPTION_VALUES = {
    "lock": ("spin", "mcs", "h2mcs"),
    "sched": ("global", "percpu", "cluster"),
    "cache": ("single", "hashfree", "ssac"),
    "cluster": None,                # "node" or a positive count
    "wakeup": ("one", "all"),
    "syncwrites": ("on", "off"),
    "lockstat": ("on", "off", "contended"),
    "witness": ("off", "on"),
    "crash": ("none", "panic", "pagefault"),    # for testing failed runs
    "alloc": ("local", "interleave"),           # SALSA: where user data pages come from
    "pvspin": ("off", "on"),                    # spinning waiters halt (issue 30)
}
KERNELS = ("tempest", "linux", "tempest-up")
# Kernels that are Tempest (its option sets, lockstat, its workloads).
TEMPEST_KERNELS = ("tempest", "tempest-up")
ACCELS = ("tcg", "kvm", "icount")
KEYS = ("name", "workloads", "machines", "cpus", "options", "kernels", "accel",
        "repeats", "seconds", "timeout", "intervals", "users", "files")
# The macro workloads that take a user count (the users key).
USER_WORKLOADS = ("gaede",)
# The macro workloads that take a count of source files (the files key).
FILE_WORKLOADS = ("pmake", "pmakeind")


class SweepError(ValueError):
    def __init__(self, where, line, reason):
        super().__init__("%s:%d: %s" % (where, line, reason) if line else
                         "%s: %s" % (where, reason))
        self.line = line
        self.reason = reason


class Point:
    """One run: a workload on one kernel, machine, CPU count, option set
    and accelerator, the repeat-th time."""

    def __init__(self, kernel, machine, cpus, options, workload, accel, repeat,
                 seconds, timeout, interval=0.0, users=None, files=0):
        self.kernel = kernel
        self.machine = machine          # preset name or ad hoc spec
        self.cpus = cpus
        self.options = dict(options)    # {} on Linux
        self.workload = workload
        self.accel = accel
        self.repeat = repeat
        self.seconds = seconds
        self.interval = interval        # lockstat -i seconds, 0: none
        self.timeout = timeout
        self.users = users              # gaede: the user count, else None
        self.files = files              # pmake, pmakeind: C files, 0 all

    @property
    def optset(self):
        """The option set's name: "lock=mcs,sched=global", "default", or
        "linux" for the Linux peer."""
        if self.kernel == "linux":
            return "linux"
        return ",".join("%s=%s" % (k, self.options[k]) for k in OPTION_VALUES
                        if k in self.options) or "default"

    @property
    def id(self):
        parts = [self.kernel, self.machine, "c%d" % self.cpus, self.optset,
                 self.workload, self.accel, "r%d" % self.repeat]
        if self.users is not None:
            parts.append("u%d" % self.users)
        if self.files:
            parts.append("f%d" % self.files)
        return re.sub(r"[^A-Za-z0-9_.+-]+", "_", "-".join(parts).replace("=", "+"))

    def batch_key(self):
        """Points that can share one boot: all but the workload, and user
        workloads apart from kernel ones."""
        return (self.kernel, self.machine, self.cpus, self.optset, self.accel, self.repeat,
                wl.WORKLOADS[self.workload].kind)

    def as_dict(self):
        return {"kernel": self.kernel, "machine": self.machine, "cpus": self.cpus,
                "options": self.options, "optset": self.optset, "workload": self.workload,
                "accel": self.accel, "repeat": self.repeat, "seconds": self.seconds,
                "interval": self.interval, "users": self.users, "files": self.files}


class Sweep:
    def __init__(self, name, points, source):
        self.name = name
        self.points = points
        self.source = source

    def batches(self):
        """The points grouped by boot, in sweep order."""
        groups = {}
        for p in self.points:
            groups.setdefault(p.batch_key(), []).append(p)
        return list(groups.values())


def _cpu_counts(words, where, n):
    """The CPU counts the words ask for: ints, "a-b" ranges, "all", "max"."""
    out = []
    for word in ",".join(words).split(","):
        if not word:
            continue
        if word in ("all", "max"):
            out.append(word)
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", word)
        if not m:
            raise SweepError(where, n, "bad CPU count '%s' (use 1-5, 1,2,4, all or max)" % word)
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if lo < 1 or hi < lo or hi > 64:
            raise SweepError(where, n, "bad CPU range '%s' (1 to 64, low to high)" % word)
        out.extend(range(lo, hi + 1))
    if not out:
        raise SweepError(where, n, "cpus needs at least one count")
    return out


def _option_sets(words, where, n):
    """The option sets of one options line: the cross product of its
    NAME=V1,V2 words."""
    if words == ["default"]:
        return [{}]
    axes = []
    for word in words:
        if "=" not in word:
            raise SweepError(where, n, "option '%s' needs a value (NAME=V1,V2)" % word)
        name, vals = word.split("=", 1)
        if name not in OPTION_VALUES:
            raise SweepError(where, n, "unknown option '%s' (known: %s)"
                             % (name, ", ".join(OPTION_VALUES)))
        if name in (a[0] for a in axes):
            raise SweepError(where, n, "option '%s' given twice on one line" % name)
        values = [v for v in vals.split(",") if v]
        if not values:
            raise SweepError(where, n, "option '%s' has no value" % name)
        for v in values:
            legal = OPTION_VALUES[name]
            ok = v in legal if legal else (v == "node" or v.isdigit() and int(v) >= 1)
            if not ok:
                raise SweepError(where, n, "bad value '%s' for %s= (%s)" % (
                    v, name, ", ".join(legal) if legal else "node or a positive count"))
        axes.append((name, values))
    return [dict(zip([a[0] for a in axes], combo))
            for combo in itertools.product(*[a[1] for a in axes])]


def _number(words, where, n, key, kind, low):
    if len(words) != 1:
        raise SweepError(where, n, "%s takes one number" % key)
    try:
        v = kind(words[0])
    except ValueError:
        v = None
    if v is None or v < low:
        raise SweepError(where, n, "bad %s '%s' (a number, at least %s)" % (key, words[0], low))
    return v


def _check_words(key, words, where, n, machine_of):
    """Check one line's words; returns the value stored for key."""
    if not words:
        raise SweepError(where, n, "%s needs a value" % key)
    if key == "name":
        if len(words) != 1 or not re.fullmatch(r"[A-Za-z0-9_.-]+", words[0]):
            raise SweepError(where, n, "name must be one word of letters, digits, . _ -")
        return words[0]
    if key == "workloads":
        for w in words:
            if w not in wl.WORKLOADS:
                raise SweepError(where, n, "unknown workload '%s' (known: %s)"
                                 % (w, ", ".join(sorted(wl.WORKLOADS))))
            if wl.WORKLOADS[w].needs:
                raise SweepError(where, n, "workload '%s' cannot run yet: it needs %s"
                                 % (w, wl.WORKLOADS[w].needs))
        return list(dict.fromkeys(words))
    if key == "machines":
        for m in words:
            try:
                machine_of(m)
            except Exception as e:
                raise SweepError(where, n, "unknown or bad machine '%s': %s" % (m, e))
        return list(dict.fromkeys(words))
    if key == "cpus":
        return _cpu_counts(words, where, n)
    if key == "options":
        return _option_sets(words, where, n)
    if key == "kernels":
        for k in words:
            if k not in KERNELS:
                raise SweepError(where, n, "unknown kernel '%s' (%s)" % (k, ", ".join(KERNELS)))
        return list(dict.fromkeys(words))
    if key == "accel":
        for a in words:
            if a not in ACCELS:
                raise SweepError(where, n, "unknown accelerator '%s' (tcg, kvm, icount)" % a)
        return list(dict.fromkeys(words))
    if key == "repeats":
        return _number(words, where, n, key, int, 1)
    if key == "seconds":
        return _number(words, where, n, key, float, 0.01)
    if key == "timeout":
        return _number(words, where, n, key, float, 1)
    if key == "intervals":
        return _number(words, where, n, key, float, 0.01)
    if key == "users":
        return _user_counts(words, where, n)
    if key == "files":
        return _number(words, where, n, key, int, 0)
    raise AssertionError(key)


def _user_counts(words, where, n):
    """The users line's counts as (number, per_cpu): "8" or "2n"."""
    out = []
    for word in words:
        m = re.fullmatch(r"(\d+)(n?)", word)
        if not m or int(m.group(1)) < 1:
            raise SweepError(where, n, "bad user count '%s' (N or Nn, N per CPU, N >= 1)" % word)
        out.append((int(m.group(1)), bool(m.group(2))))
    return list(dict.fromkeys(out))


def _users_of(wname, block, cpus):
    """The user counts a point of workload wname takes at cpus: None
    for a workload without users."""
    if wname not in USER_WORKLOADS:
        return [None]
    return list(dict.fromkeys(k * cpus if per_cpu else k for k, per_cpu in block["users"]))


DEFAULTS = {"kernels": ["tempest"], "accel": ["tcg"], "repeats": 1, "seconds": 1.0,
            "timeout": 600.0, "options": [{}], "intervals": 0.0, "users": [(2, True)],
            "files": 0}


def _expand_block(block, where, machine_of):
    for key in ("workloads", "machines", "cpus"):
        if key not in block:
            raise SweepError(where, block["_line"], "the block starting here has no '%s' line"
                             % key)
    points = []
    for kernel in block["kernels"]:
        optsets = block["options"] if kernel in TEMPEST_KERNELS else [{}]
        for mname in block["machines"]:
            mcpus = machine_of(mname).cpus
            counts = []
            for c in block["cpus"]:
                c = list(range(1, mcpus + 1)) if c == "all" else [mcpus] if c == "max" else [c]
                counts.extend(x for x in c if x <= mcpus and (kernel != "tempest-up" or x == 1))
            if not counts and kernel == "tempest-up":
                raise SweepError(where, block["_cpus_line"], "kernel tempest-up runs on one "
                                 "cpu: the cpus line must include 1")
            if not counts:
                raise SweepError(where, block["_cpus_line"], "machine '%s' has %d cpus: none of "
                                 "the counts asked for fit" % (mname, mcpus))
            for cpus, opts, wname, accel, rep in itertools.product(
                    sorted(set(counts)), optsets, block["workloads"], block["accel"],
                    range(1, block["repeats"] + 1)):
                family = "tempest" if kernel == "tempest-up" else kernel
                if family not in wl.WORKLOADS[wname].kernels:
                    continue
                files = block["files"] if wname in FILE_WORKLOADS else 0
                for users in _users_of(wname, block, cpus):
                    points.append(Point(kernel, mname, cpus, opts, wname, accel, rep,
                                        block["seconds"], block["timeout"], block["intervals"],
                                        users, files))
    return points


def parse_text(text, where, machine_of, default_name="sweep"):
    """A Sweep from the text of a sweep file; where names it in errors;
    machine_of(spec) returns a machine or raises."""
    blocks, block = [], dict(DEFAULTS, _line=1)
    name = default_name
    seen_options = False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        key, rest = words[0], words[1:]
        if key == "and":
            if rest:
                raise SweepError(where, n, "'and' stands alone on its line")
            blocks.append(block)
            block = dict(block, _line=n)
            seen_options = False
            continue
        if key not in KEYS:
            raise SweepError(where, n, "unknown key '%s' (known: %s, and)" % (key, ", ".join(KEYS)))
        value = _check_words(key, rest, where, n, machine_of)
        if key == "name":
            name = value
        elif key == "options":
            block["options"] = (block["options"] if seen_options else []) + value
            seen_options = True
        else:
            block[key] = value
            if key == "cpus":
                block["_cpus_line"] = n
    blocks.append(block)
    points, seen = [], set()
    for b in blocks:
        for p in _expand_block(b, where, machine_of):
            if p.id not in seen:
                seen.add(p.id)
                points.append(p)
    if not points:
        raise SweepError(where, 0, "the sweep has no points")
    return Sweep(name, points, where)


def parse_file(path, machine_of):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise SweepError(path, 0, "cannot read it: %s" % e.strerror)
    base = os.path.basename(path)
    return parse_text(text, path, machine_of, re.sub(r"\.\w+$", "", base) or "sweep")
