"""The instruction-set flags of this machine's CPU, for choices measured per CPU kind.

Two choices depend on them: whether bfloat16 is computed at speed
(`training/precision.py`) and whether a dense layer's kernel gradient is
faster as an XLA dot (`modeling/token_dense.py`). Linux lists the flags in
`/proc/cpuinfo`; elsewhere they are unknown (None), and callers keep
their default. Each file is read once per process: every dense layer of
an encoder asks when it is built.

Example:

>>> import tempfile
>>> with tempfile.NamedTemporaryFile("w", suffix="cpuinfo") as file:
...     _ = file.write("processor\\t: 0\\nflags\\t\\t: fpu avx2 fma\\n\\n")
...     file.flush()
...     sorted(cpu_flags(file.name))
['avx2', 'fma', 'fpu']
"""

import functools


@functools.cache
def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The flags of every `flags` line of `cpuinfo`, as a frozenset; None if unreadable."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    return frozenset(flag for line in lines if line.startswith("flags")
                     for flag in line.partition(":")[2].split())
