"""The disks of a Tempest boot: virtio images and scratch disks behind the
preset's controllers (PCI bridges), and scratch ATA disks for QEMU and
Bochs.  Used through tests/tempest.py, which re-exports disk_plan,
disk_args, bochs_ata_disks and SCRATCH_MIB."""

import os

# Virtio disks (QEMU only; Bochs has no virtio) come from two places, in
# this order: image files the caller passes (disk_images: attached as they
# are, read-write, so a test can inspect them on the host after power-off)
# and scratch disks, sparse raw files made in the boot's temporary
# directory and deleted with it.  The kernel names virtio disks in PCI
# order, which is the order of the command line (see drivers/pci/pci.c), so the
# first image is vda, the next vdb, and so on, then the scratch disks.
#
# A preset's "disks" column (DISKSxCONTROLLERS) says how many disks the
# machine has and on how many controllers; boot() makes up the count with
# scratch disks of SCRATCH_MIB when the caller gives no sizes.  The SVR4 MP
# machine had its 8 disks on 4 SCSI host adapters.  QEMU cannot give a
# virtio disk a host adapter, so a controller is modelled as a PCI-to-PCI
# bridge (-device pci-bridge) with its disks behind it, filled in order
# (8x4: vda vdb on the first, vdc vdd on the second, ...).  That models
# what the kernel can see of a controller -- which disks share a path to
# the host bus and, through the bridge's interrupt swizzle, interrupt lines
# -- but not its bandwidth: QEMU serves each virtio disk on its own, so
# disks on one bridge do not slow each other down.  A machine with no
# controllers in its column (or given disks without one) has its disks on
# the root bus.
#
# ATA disks (ata_disks, sizes in MiB) are scratch IDE disks.  In QEMU they
# take IDE indexes 0, 1 and 3 (ata0 master, ata0 slave, ata1 slave; the
# boot CD-ROM is index 2, ata1 master).  In Bochs they are ata0 master and
# slave, and the CD-ROM is ata1 master.

SCRATCH_MIB = 8             # a preset's scratch disks: small, and sparse
QEMU_ATA_INDEXES = (0, 1, 3)
BOCHS_ATA_SLOTS = ("ata0-master", "ata0-slave")
BRIDGE_SLOT0 = 0x10         # root-bus slot of the first controller bridge
# Bochs derives a flat image's geometry from its size when it is a whole
# number of 16-head, 63-sector cylinders; its ATA scratch disks are sized so.
BOCHS_CYL_BYTES = 16 * 63 * 512


def _scratch(path, nbytes):
    with open(path, "wb") as f:
        f.truncate(int(nbytes))
    return path


def disk_plan(m, disks=None, disk_images=()):
    """The virtio disks of a boot: (images, scratch sizes in MiB,
    controllers).  disks=None means the preset's: its disk count made up
    with SCRATCH_MIB scratch disks after the images; otherwise the sizes
    given.  controllers is the preset's controller count, 0 for none."""
    images = [os.path.abspath(p) for p in disk_images]
    for p in images:
        if not os.path.isfile(p):
            raise FileNotFoundError("disk image %s does not exist" % p)
    if disks is None:
        sizes = [SCRATCH_MIB] * max(0, m.disks[0] - len(images))
    else:
        sizes = [int(x) for x in disks]
        if any(x <= 0 for x in sizes):
            raise ValueError("disk sizes must be positive MiB: %r" % (disks,))
    return images, sizes, (m.disks[1] if m.disks[0] else 0)


def disk_args(m, tmp, disks=None, disk_images=(), ata_disks=()):
    """QEMU arguments attaching the boot's disks (see above); scratch
    images are made in tmp."""
    images, sizes, ctrl = disk_plan(m, disks, disk_images)
    # Scratch disks die with the boot, so their flushes need not reach the
    # host disk (cache=unsafe): an fdatasync per ATA write or virtio flush
    # on a busy host costs tens of milliseconds.  Images keep QEMU's
    # default, honouring the guest's flushes.
    files = [(p, "") for p in images] + \
        [(_scratch(os.path.join(tmp, "vd%d.img" % i), mib << 20), ",cache=unsafe")
         for i, mib in enumerate(sizes)]
    n = len(files)
    args = []
    ctrl = min(ctrl, n)
    used = [0] * ctrl                           # slots taken on each bridge
    for k in range(ctrl):
        args += ["-device", "pci-bridge,id=br%d,chassis_nr=%d,addr=0x%x"
                 % (k, k + 1, BRIDGE_SLOT0 + k)]
    for i, (path, cache) in enumerate(files):
        args += ["-drive", "file=%s,format=raw,if=none,id=vd%d%s" % (path, i, cache)]
        dev = "virtio-blk-pci,drive=vd%d" % i
        if ctrl:
            k = i * ctrl // n                   # consecutive disks share a bridge
            used[k] += 1
            dev += ",bus=br%d,addr=0x%x" % (k, used[k])
        args += ["-device", dev]
    if len(ata_disks) > len(QEMU_ATA_INDEXES):
        raise ValueError("at most %d ATA disks (the CD-ROM has one IDE slot)"
                         % len(QEMU_ATA_INDEXES))
    for i, mib in enumerate(ata_disks):
        img = _scratch(os.path.join(tmp, "ata%d.img" % i), int(mib) << 20)
        args += ["-drive", "file=%s,format=raw,if=ide,index=%d,cache=unsafe"
                 % (img, QEMU_ATA_INDEXES[i])]
    return args


def bochs_ata_disks(tmp, ata_disks=()):
    """[(bochsrc slot, image path, cylinders)] for Bochs scratch ATA disks,
    each rounded up to whole cylinders."""
    if len(ata_disks) > len(BOCHS_ATA_SLOTS):
        raise ValueError("Bochs: at most %d ATA disks (ata1 holds the CD-ROM)"
                         % len(BOCHS_ATA_SLOTS))
    out = []
    for i, mib in enumerate(ata_disks):
        cyl = max(1, -(-(int(mib) << 20) // BOCHS_CYL_BYTES))
        img = _scratch(os.path.join(tmp, "ata%d.img" % i), cyl * BOCHS_CYL_BYTES)
        out.append((BOCHS_ATA_SLOTS[i], img, cyl))
    return out
