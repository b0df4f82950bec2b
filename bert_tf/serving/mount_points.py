"""`is_mount_point`: whether a folder is a mount point, bind mounts included.

An export renames a whole folder into place, which cannot replace a mount
point. `os.path.ismount` compares a folder's device with its parent's, so it
misses a bind mount of a folder of the same file system (a container's
volume from the host's disk, say); the kernel's mount table of this process
(`/proc/self/mountinfo`, on Linux) lists it, so both are asked.
"""

import os
import re

MOUNT_TABLE = "/proc/self/mountinfo"


def mount_points(table=MOUNT_TABLE):
    """The mount points of the kernel's table `table`; empty where it cannot be read.

    Example:

    >>> "/" in mount_points() or not os.path.exists(MOUNT_TABLE)
    True
    """
    try:
        with open(table, encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:  # not Linux
        return set()
    # The fifth field is the mount point, with space, tab, newline and backslash
    # written as three octal digits after a backslash.
    return {re.sub(r"\\([0-7]{3})", lambda code: chr(int(code.group(1), 8)), fields[4])
            for fields in map(str.split, lines) if len(fields) > 4}


def is_mount_point(folder):
    """Whether `folder` (after following its links) is a mount point.

    Example:

    >>> is_mount_point("/"), is_mount_point(os.path.dirname(__file__))
    (True, False)
    """
    path = os.path.realpath(folder)
    return os.path.ismount(path) or path in mount_points()
