"""The warning before a mixed_bfloat16 run on CPUs that emulate bfloat16."""

import pathlib

from bert_tf.training.precision import bfloat16_emulation_note
from tests_shared import write_cpuinfo

CPU = ["/job:localhost/replica:0/task:0/device:CPU:0"]


def test_a_cpu_without_bfloat16_instructions_gets_the_note(tmp_path):
    avx2_only = write_cpuinfo(tmp_path, "fpu sse2 avx avx2 fma")
    note = bfloat16_emulation_note("mixed_bfloat16", CPU, avx2_only)
    assert note.startswith("--mixed_precision=mixed_bfloat16 on a CPU without bfloat16 ")
    assert "avx512_bf16 or amx_bf16 in " + avx2_only in note


def test_bfloat16_instructions_float_policies_and_accelerators_get_none(tmp_path):
    for flags in ("avx2 avx512f avx512_bf16", "avx2 amx_tile amx_bf16 amx_int8"):
        with_bfloat16 = write_cpuinfo(tmp_path, flags)
        assert bfloat16_emulation_note("mixed_bfloat16", CPU, with_bfloat16) is None
    avx2_only = write_cpuinfo(tmp_path, "avx2")
    for policy in ("float32", "mixed_float16"):
        assert bfloat16_emulation_note(policy, CPU, avx2_only) is None
    for device in ("/device:GPU:0", "/job:worker/replica:0/task:0/device:TPU:3"):
        assert bfloat16_emulation_note("mixed_bfloat16", [device], avx2_only) is None
    # Without a readable cpuinfo (not Linux) there is no way to tell: no note.
    assert bfloat16_emulation_note("mixed_bfloat16", CPU, str(tmp_path / "missing")) is None


def test_this_machine_is_judged_by_its_own_flags():
    """The real /proc/cpuinfo: the note appears exactly when no flags line names bf16."""
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        assert bfloat16_emulation_note("mixed_bfloat16", CPU) is None
        return
    text = cpuinfo.read_text()
    has_bf16 = "avx512_bf16" in text.split() or "amx_bf16" in text.split()
    assert (bfloat16_emulation_note("mixed_bfloat16", CPU) is None) == has_bf16
