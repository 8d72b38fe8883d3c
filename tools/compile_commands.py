#!/usr/bin/env python3
"""Write compile_commands.json for the kernel's C files (for editors)."""
import json
import os
import shlex
import sys

cmd, build, srcs = sys.argv[1], sys.argv[2], sys.argv[3:]
root = os.getcwd()
entries = [{
    "directory": root,
    "file": os.path.join(root, s),
    "arguments": shlex.split(cmd) + ["-c", s, "-o", os.path.join(build, s[:-2] + ".o")],
} for s in srcs]
json.dump(entries, sys.stdout, indent=1)
