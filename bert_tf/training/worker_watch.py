"""The watcher of a worker that waits for the others of its cluster (a process of its own).

`python worker_watch.py PARENT_PID WAIT_SECONDS PROGRAM OTHERS_JSON`, started by
`distribution.WaitingForWorkers` while TensorFlow builds a multi-worker
strategy. That call blocks until every worker has started, holding
Python's interpreter lock, so no thread of the waiting process can speak
meanwhile; TensorFlow says nothing, and worker 0 waits for ever. This
process writes to the same stderr every `REPORT_SECONDS` which workers do
not answer at their address, and after `WAIT_SECONDS` (0: never) writes
the one error line and ends the waiting process. It imports nothing but
the standard library, so it starts in a blink; it ends with its parent.
"""

import json
import os
import signal
import socket
import sys
import time

REPORT_SECONDS = 30.0


def unreachable(address, timeout=2.0):
    """Why nothing accepts a connection at `address` ("host:port"), in words; None if it does.

    The words follow the address in a sentence: "a:1 refused the connection".

    >>> unreachable("localhost:1")
    'refused the connection'
    """
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return None
    except ValueError:
        return "is not a HOST:PORT address"
    except ConnectionRefusedError:
        return "refused the connection"
    except socket.gaierror as e:  # before OSError, which it is
        return f"does not resolve ({e.strerror})"
    except TimeoutError:
        return f"did not accept a connection within {timeout:g} s"
    except OSError as e:
        return f"cannot be reached ({e.strerror or e})"


def answers(address, timeout=2.0):
    """Whether something listens at `address` ("host:port").

    >>> answers("localhost:1")
    False
    """
    return unreachable(address, timeout) is None


def status(others):
    """Which of `{address: name}` answer, in words."""
    silent = [f"{name} at {address}" for address, name in others.items() if not answers(address)]
    return (f"nothing answers for {', '.join(silent)}" if silent else
            "all of them answer, so they wait too (the same TF_CONFIG cluster on each?)")


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def watch(parent, wait_seconds, program, others, report_seconds=REPORT_SECONDS):
    """Reports every `report_seconds` until `parent` ends; ends it after `wait_seconds`."""
    start = next_report = time.monotonic()
    give_up = start + wait_seconds if wait_seconds else float("inf")
    while True:
        next_report += report_seconds
        wake = min(next_report, give_up)  # the wait ends on time, not at the next report
        while time.monotonic() < wake:  # a parent that ended (Ctrl-C) ends the watch
            time.sleep(min(1.0, max(0.0, wake - time.monotonic())))
            if not _alive(parent) or os.getppid() != parent:
                return
        waited = time.monotonic() - start
        if wait_seconds and waited >= wait_seconds:
            os.write(2, f"{program}: error: the other workers of TF_CONFIG did not join within "
                        f"{wait_seconds} s ({status(others)}); start every worker, or give "
                        "--worker_wait_seconds more time\n".encode())
            os.kill(parent, signal.SIGKILL)  # its SIGTERM may be TensorFlow's to handle
            return
        os.write(2, f"{program}: waited {waited:.0f} s for the other workers of TF_CONFIG: "
                    f"{status(others)}\n".encode())


if __name__ == "__main__":
    parent_pid, seconds, name, addresses = sys.argv[1:5]
    report = float(sys.argv[5]) if len(sys.argv) > 5 else REPORT_SECONDS
    watch(int(parent_pid), float(seconds), name, json.loads(addresses), report)
