"""A command on a pseudo-terminal, as a person at a terminal runs it, for
the tests that drive `make run` interactively (tests/newcomer_check.py).

    term = Terminal(["make", "run"], cwd=ROOT)
    term.expect(r"# $", 60)
    term.type("lockstat\\n")
    term.hang_up()              # the terminal closed: SIGHUP, as on Linux
    term.status                 # the wait status of the command

Terminal records the command's whole process tree while it runs (family()),
so a test can check afterwards that nothing it started is left (left()).
"""

import os
import pty
import re
import select
import signal
import time


class TerminalTimeout(Exception):
    pass


def _stat(pid):
    """(parent pid, start time) of pid from /proc, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces or ')'.
    fields = data[data.rindex(b")") + 2:].split()
    return int(fields[1]), int(fields[19])


def _children():
    """{parent pid: [child pid, ...]} of every process on the host."""
    kids = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st:
                kids.setdefault(st[0], []).append(int(name))
    return kids


def note_tree(root, seen):
    """Add root and every process under it to seen ({pid: start time});
    a process seen once stays, with its start time, so a pid used again
    later by someone else is not mistaken for it."""
    kids = _children()
    todo = [root]
    while todo:
        pid = todo.pop()
        st = _stat(pid)
        if st and pid not in seen:
            seen[pid] = st[1]
        todo += kids.get(pid, [])
    return seen


def still_running(seen):
    """The processes of seen still running (not zombies): [(pid, command line)]."""
    alive = []
    for pid, start in sorted(seen.items()):
        st = _stat(pid)
        if not st or st[1] != start:
            continue
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                line = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        alive.append((pid, line))
    return alive


class Terminal:
    """cmd in a new session with a pseudo-terminal as its controlling
    terminal; the output is kept (self.output, bytes) as it is read."""

    def __init__(self, cmd, cwd=None, env=None, rows=24, cols=80):
        self.output = b""
        self.status = None
        self.seen = {}          # pid: start time, every process of the tree
        pid, fd = pty.fork()
        if pid == 0:
            try:
                if cwd:
                    os.chdir(cwd)
                os.execvpe(cmd[0], cmd, env if env is not None else os.environ)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.mark = 0           # where the next expect starts looking
        self.family()

    def family(self):
        """Note every process now under the command (note_tree)."""
        return sorted(note_tree(self.pid, self.seen))

    def left(self):
        """The noted processes still running (not zombies), as
        [(pid, command line)]."""
        return still_running(self.seen)

    def _read(self, wait):
        if self.fd is None:
            return False
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:         # EIO: every holder of the slave is gone
            data = b""
        if not data:
            return False
        self.output += data
        return True

    def expect(self, pattern, timeout):
        """Read until pattern (a bytes or str regex) appears in the output
        after the last match; returns the match.  Notes the process tree
        as it goes.  TerminalTimeout when it does not appear in time or the
        terminal closes first."""
        if isinstance(pattern, str):
            pattern = pattern.encode()
        regex = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        last_family = 0.0
        while True:
            m = regex.search(self.output, self.mark)
            if m:
                self.mark = m.end()
                return m
            now = time.monotonic()
            if now > deadline:
                raise TerminalTimeout("no %r within %d s; last output: %r"
                                      % (pattern.decode(), timeout, self.output[-200:]))
            if now - last_family > 0.5:
                self.family()
                last_family = now
            if not self._read(min(0.2, deadline - now)):
                raise TerminalTimeout("the terminal closed before %r; last output: %r"
                                      % (pattern.decode(), self.output[-200:]))

    def type(self, text):
        """Type text, a character at a time as a person would (a console
        may drop what arrives faster than the guest reads)."""
        for ch in text.encode():
            os.write(self.fd, bytes([ch]))
            time.sleep(0.005)

    def wait(self, timeout):
        """Wait for the command to exit, reading its output meanwhile;
        returns its wait status, or None if it is still running."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                while self._read(0):
                    pass
                return status
            if not self._read(0.1):
                time.sleep(0.1)
        return None

    def hang_up(self):
        """Close the terminal, as a window closed: the kernel sends SIGHUP
        to the session's leader (the command), as on Linux."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def close(self, grace=5.0):
        """End whatever is left of the tree (SIGTERM, then SIGKILL) and
        close the terminal: a failed test must not leave processes either."""
        self.hang_up()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not self.left():
                break
            for pid, _ in self.left():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + grace
            while self.left() and time.monotonic() < deadline:
                time.sleep(0.1)
        if self.status is None:
            try:
                pid, status = os.waitpid(self.pid, 0)
                self.status = status
            except ChildProcessError:
                pass
