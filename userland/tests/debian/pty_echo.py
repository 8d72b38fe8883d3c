# Python's pty module inside Tempest (native.sh): a child on a new
# pseudo-terminal reads a line typed at the master and answers; the
# master waits for the prompt, types the line, and reads the echo and
# the answer (NL shown as CR NL) until the slave's end, and the child's
# exit status.  Typing only after the prompt fixes the order: typed
# earlier, the echo could come before or after the child's first line.
import os
import pty

pid, fd = pty.fork()
if pid == 0:
    print("child on", os.ttyname(0), flush=True)
    line = input("name? ")
    print("hello", line, flush=True)
    os._exit(3)
out = b""
while not out.endswith(b"name? "):
    chunk = os.read(fd, 1024)
    if not chunk:
        break
    out += chunk
os.write(fd, b"world\n")
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:             # EIO: the slave's last holder is gone
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
print(repr(out), os.waitstatus_to_exitcode(status))
