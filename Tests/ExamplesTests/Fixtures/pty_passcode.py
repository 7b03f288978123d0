"""Types a passcode into AccountsApp on a real terminal (a pseudo-terminal) and reports whether
the terminal echoed it. Usage: pty_passcode.py <AccountsApp executable>. Prints ECHOED or
NOT ECHOED, then the app's exit status; exits non-zero (with what it saw) if the app does not
say what it should within 30 s."""
import os
import pty
import select
import sys
import time

executable = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execv(executable, [executable, "--interactive"])

pending = b""


def wait_for(pattern, timeout=30.0):
    """Reads until `pattern`; returns everything read up to and including it."""
    global pending
    deadline = time.monotonic() + timeout
    while pattern not in pending:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            sys.exit("timed out waiting for %r; last output: %r" % (pattern, pending[-400:]))
        try:
            data = os.read(fd, 4096)
        except OSError:
            sys.exit("the app ended while waiting for %r; last output: %r" % (pattern, pending[-400:]))
        pending += data
    end = pending.index(pattern) + len(pattern)
    seen, pending = pending[:end], pending[end:]
    return seen


wait_for(b"commands: list")
os.write(fd, b"passcode 97531\n")
wait_for(b"passcode set")
os.write(fd, b"bg\n")
wait_for(b"entered the background")
os.write(fd, b"fg\n")
wait_for(b"left): ")
os.write(fd, b"97531\n")
after = wait_for(b"unlocked")
print("ECHOED" if b"97531" in after else "NOT ECHOED")
os.write(fd, b"quit\n")
wait_for(b"terminated")
_, status = os.waitpid(pid, 0)
print("exit", os.waitstatus_to_exitcode(status))
