"""Process helpers for tests that start real tuner processes (Linux /proc)."""
import os
import time


def processes_in_session(sid):
    """(pid, command) of every live (not zombie) process in session ``sid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append((int(name), stat[stat.index("(") + 1:stat.rindex(")")]))
    return found


def wait_until(predicate, seconds, step=0.05):
    """Poll ``predicate`` until it is true (True) or ``seconds`` have passed (False)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
