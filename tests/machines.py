"""Tempest's machine presets: machines.conf parsed into Machine objects
(CPUs spread over NUMA nodes, memory per node, the SLIT, disks and their
controllers), and ad hoc machines given as key=value pairs.  Used through
tests/tempest.py, which re-exports machine(), load_machines(), Machine and
MachineError."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MACHINES_CONF = os.path.join(ROOT, "machines.conf")


class MachineError(ValueError):
    pass


class Machine:
    """One machine: CPUs spread evenly over nodes, memory per node, SLIT."""

    def __init__(self, name, cpus, nodes=1, mem=256, group=None,
                 dists=(10,), disks=(0, 0), mimics="", extra=None):
        self.name = name
        self.cpus = int(cpus)
        self.nodes = int(nodes)
        self.mem = int(mem)                 # MiB per node
        self.group = int(group) if group else None
        self.dists = tuple(int(d) for d in dists)
        self.disks = tuple(disks)           # (disks, controllers)
        self.mimics = mimics
        self.extra = dict(extra or {})
        self._validate()

    def _validate(self):
        n = self.name
        if self.cpus < 1 or self.nodes < 1 or self.mem < 1:
            raise MachineError("%s: cpus, nodes and mem must be positive" % n)
        if self.cpus % self.nodes:
            raise MachineError("%s: %d cpus do not split evenly over %d nodes"
                               % (n, self.cpus, self.nodes))
        if self.dists[0] != 10:
            raise MachineError("%s: the local distance must be 10" % n)
        if self.nodes > 1 and len(self.dists) < 2:
            raise MachineError("%s: %d nodes need distances" % (n, self.nodes))
        if len(self.dists) == 3 and not self.group:
            raise MachineError("%s: three distances need a group size" % n)
        if len(self.dists) > 3:
            raise MachineError("%s: at most three distance levels" % n)
        if self.group and self.nodes % self.group:
            raise MachineError("%s: %d nodes do not split into groups of %d"
                               % (n, self.nodes, self.group))
        if any(d <= 10 for d in self.dists[1:]):
            raise MachineError("%s: remote distances must exceed 10" % n)
        nd, nc = self.disks
        if nd and not 1 <= nc <= nd:
            raise MachineError("%s: %d disks need 1 to %d controllers, not %d"
                               % (n, nd, nd, nc))
        if nd > 32 or (nc and -(-nd // nc) > 31):
            raise MachineError("%s: at most 32 disks and 31 a controller" % n)

    @property
    def numa(self):
        """Whether QEMU is given -numa arguments (and so an SRAT/SLIT)."""
        return self.nodes > 1

    @property
    def total_mem(self):
        return self.nodes * self.mem

    @property
    def cpus_per_node(self):
        return self.cpus // self.nodes

    def node_cpus(self, node):
        c = self.cpus_per_node
        return list(range(node * c, node * c + c))

    def distance(self, i, j):
        if i == j:
            return self.dists[0]
        if len(self.dists) == 3 and i // self.group == j // self.group:
            return self.dists[1]
        return self.dists[-1]

    def matrix(self):
        return [[self.distance(i, j) for j in range(self.nodes)]
                for i in range(self.nodes)]

    def single_node(self, name=None):
        """The same machine as seen without an SRAT: one node, all memory."""
        return Machine(name or self.name, self.cpus, 1, self.total_mem,
                       disks=self.disks, mimics=self.mimics, extra=self.extra)

    def describe(self):
        s = "%d cpu%s, " % (self.cpus, "" if self.cpus == 1 else "s")
        if self.nodes == 1:
            s += "%d MiB, one node" % self.mem
        else:
            s += "%d nodes of %d cpu%s and %d MiB, distances %s" % (
                self.nodes, self.cpus_per_node,
                "" if self.cpus_per_node == 1 else "s", self.mem,
                "/".join(map(str, self.dists)))
            if self.group:
                s += " in groups of %d" % self.group
        if self.disks[0]:
            s += ", %d disks on %d controllers" % self.disks
        return s

    def __repr__(self):
        return "Machine(%s: %s)" % (self.name, self.describe())


def _parse_dists(s, where):
    if s in ("-", ""):
        return (10,)
    try:
        return tuple(int(x) for x in s.split("/"))
    except ValueError:
        raise MachineError("%s: bad distances %r" % (where, s))


def _parse_disks(s, where):
    if s in ("-", "", "0"):
        return (0, 0)
    m = re.fullmatch(r"(\d+)x(\d+)", s)
    if not m:
        raise MachineError("%s: bad disks %r (want DISKSxCONTROLLERS)"
                           % (where, s))
    return (int(m.group(1)), int(m.group(2)))


def load_machines(path=MACHINES_CONF):
    """All presets of machines.conf, in file order, as {name: Machine}."""
    machines = {}
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line, _, comment = raw.partition("#")
            fields = line.split()
            if not fields:
                continue
            where = "%s:%d" % (os.path.basename(path), lineno)
            if len(fields) < 7:
                raise MachineError("%s: want 7 columns, got %d"
                                   % (where, len(fields)))
            name, cpus, nodes, mem, group, dist, disks = fields[:7]
            extra = {}
            for kv in fields[7:]:
                k, eq, v = kv.partition("=")
                if not eq:
                    raise MachineError("%s: extra column %r is not key=value"
                                       % (where, kv))
                extra[k] = v
            try:
                m = Machine(name, int(cpus), int(nodes), int(mem),
                            None if group == "-" else int(group),
                            _parse_dists(dist, where),
                            _parse_disks(disks, where),
                            comment.strip(), extra)
            except ValueError as e:
                raise MachineError("%s: %s" % (where, e))
            if name in machines:
                raise MachineError("%s: preset %s given twice" % (where, name))
            machines[name] = m
    return machines


def machine(spec):
    """A preset by name, an ad-hoc key=value machine, or a Machine as is.

    Ad-hoc keys: cpus, nodes (1), mem (MiB per node, 256), group, dist
    (10/20 or 10/20/30), disks (8x4), name."""
    if isinstance(spec, Machine):
        return spec
    if "=" not in spec:
        presets = load_machines()
        if spec not in presets:
            raise MachineError("unknown machine %r (presets: %s)"
                               % (spec, " ".join(presets)))
        return presets[spec]
    kv = {}
    for part in re.split(r"[,\s]+", spec.strip()):
        if not part:
            continue
        k, eq, v = part.partition("=")
        if not eq:
            raise MachineError("bad machine spec part %r" % part)
        kv[k] = v
    unknown = set(kv) - {"name", "cpus", "nodes", "mem", "group", "dist",
                         "disks"}
    if unknown:
        raise MachineError("unknown machine keys: %s" % ", ".join(sorted(unknown)))
    if "cpus" not in kv:
        raise MachineError("an ad-hoc machine needs cpus=")
    try:
        nodes = int(kv.get("nodes", 1))
        dists = _parse_dists(kv.get("dist", "-"), "machine")
        if nodes > 1 and len(dists) == 1:
            dists = (10, 20)
        return Machine(kv.get("name", "adhoc"), int(kv["cpus"]), nodes,
                       int(kv.get("mem", 256)),
                       int(kv["group"]) if kv.get("group") else None,
                       dists, _parse_disks(kv.get("disks", "-"), "machine"),
                       "ad hoc")
    except ValueError as e:
        raise MachineError(str(e))
