"""The command slot of a kept UFS root image (make run ROOT=... USERLAND=debian).

S5 images have s5cat -w to rewrite /etc/rc.run in place; for a UFS image
the host writes the file's bytes in the image directly instead.  The slot
is a file of SLOT_SIZE bytes, smaller than a UFS block, so its data is one
run of contiguous fragments; its last line is MARK, found by a scan of the
image, and the slot's first byte is SLOT_SIZE - 1 bytes before the end of
MARK.  The command (or init's empty-slot line) goes at the start, padded
with newlines up to MARK, a shell comment.  The image must hold MARK once:
a copy of the slot elsewhere makes the place ambiguous, and is refused.
"""

import os

SLOT_SIZE = 4096
# Split so that this source, copied into an image, does not hold it whole.
MARK = b"# tempest: " + b"end of the command slot of a kept root image\n"
NO_COMMAND = b"# tempest: no command\n"      # userland/init/init.c
CHUNK = 16 << 20


class SlotError(Exception):
    """Why the slot cannot be written, in one line."""


def empty_slot():
    """The bytes of a new slot holding no command."""
    return fill(NO_COMMAND)


def fill(body):
    room = SLOT_SIZE - len(MARK)
    if len(body) > room:
        raise SlotError("the command is %d bytes, longer than the slot's %d" % (len(body), room))
    return body + b"\n" * (room - len(body)) + MARK


def find_mark(f):
    """The offsets of MARK in the open image f."""
    found, offset, tail = [], 0, b""
    while True:
        chunk = f.read(CHUNK)
        if not chunk:
            return found
        data = tail + chunk
        base = offset - len(tail)
        i = data.find(MARK)
        while i >= 0:
            found.append(base + i)
            i = data.find(MARK, i + 1)
        tail = data[-(len(MARK) - 1):]
        offset += len(chunk)


def write(image, command):
    """Put command (None: no command) in the slot of image."""
    body = NO_COMMAND if command is None else command.encode() + b"\n"
    data = fill(body)
    try:
        with open(image, "r+b") as f:
            marks = find_mark(f)
            if len(marks) != 1:
                raise SlotError("%s holds %d command slots, not one" % (image, len(marks)))
            start = marks[0] + len(MARK) - SLOT_SIZE
            f.seek(start)
            if start < 0 or b"\0" in f.read(SLOT_SIZE - len(MARK)):
                raise SlotError("the command slot of %s is damaged" % image)
            f.seek(start)
            f.write(data)
    except OSError as e:
        raise SlotError("%s: %s" % (image, e.strerror))
