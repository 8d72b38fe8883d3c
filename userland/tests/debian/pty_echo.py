# Python's pty module inside Tempest (native.sh): a child on a new
# pseudo-terminal reads a line typed at the master and answers; the
# master reads the echo and the answers (NL shown as CR NL) until the
# slave's end, and the child's exit status.
import os
import pty

pid, fd = pty.fork()
if pid == 0:
    print("child on", os.ttyname(0), flush=True)
    line = input("name? ")
    print("hello", line, flush=True)
    os._exit(3)
os.write(fd, b"world\n")
out = b""
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
