"""Pretraining-data creation speed: ours (exact and fast mode) vs TF Model Garden.

TF Model Garden's `official.nlp.data.create_pretraining_data` is a port of the
original tool; it needs tensorflow 2.20, so it lives in its own virtual
environment outside the repository, and runs only when `--peer_python`
names that environment's python:

    python3 -m venv /tmp/mg_venv
    /tmp/mg_venv/bin/pip install tensorflow==2.20.0 tf-models-official==2.20.0
    .venv/bin/python bench/pretraining_data_speed.py --peer_python=/tmp/mg_venv/bin/python

Each tool runs as its own process with the same flags on the same input,
one after another, for `--repeats` rounds (the tools take turns, so load
from other work spreads over all of them). The table (`timing_table`) gives
per tool the fastest, median and slowest round's wall time, instances per
second from the median and the CPU share (CPU seconds of all its processes
over wall time over cores); then the median work time (from the tool's
first log line after its imports to its last, i.e. without interpreter and
library start-up) and instances per second over it, both rates against the
peer's, and the largest peak memory (proportional set size summed over the
process tree, so pages shared between processes count once; sampled every
100 ms).
"""

import argparse
import datetime
import os
import pathlib
import re
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import psutil

from timing_table import BenchRun, TimedRow, markdown_table

from shared_data import SHARED_DATA, path_argument

REPO = pathlib.Path(__file__).resolve().parent.parent
_LOG_TIME = re.compile(r"^[IWE](\d{4}) (\d\d:\d\d:\d\d\.\d+) ", re.M)
# First log line of the real work (after imports) of each tool.
_START = {"peer": "*** Reading from input files ***", "exact": "exact mode:",
          "fast": "fast mode,"}
NAMES = {"peer": "Model Garden", "exact": "ours, exact mode", "fast": "ours, fast mode"}


def _count_records(paths):
    """Records in TFRecord files, from their framing (length, crc, data, crc)."""
    count = 0
    for path in paths:
        with open(path, "rb") as f:
            while header := f.read(12):
                (length,) = struct.unpack("<Q", header[:8])
                f.seek(length + 4, os.SEEK_CUR)
                count += 1
    return count


def _work_seconds(log, start_marker):
    """Seconds between the log line holding `start_marker` and the last log line."""
    stamps = []
    for line in log.splitlines():
        match = _LOG_TIME.match(line)
        if match and (stamps or start_marker in line):
            stamps.append(datetime.datetime.strptime(match.group(2), "%H:%M:%S.%f"))
    if len(stamps) < 2:
        return float("nan")
    return (stamps[-1] - stamps[0]).total_seconds() % 86400


def _run(command, env):
    """Runs `command`, returning (wall s, CPU s, peak tree PSS bytes, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   cwd=REPO)
        root, peak = psutil.Process(process.pid), 0
        while process.poll() is None:
            try:
                tree = [root] + root.children(recursive=True)
                peak = max(peak, sum(p.memory_full_info().pss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.1)
        wall = time.monotonic() - start
        log.seek(0)
        text = log.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if process.returncode:
        sys.exit(f"{command[:3]} failed:\n{text[-3000:]}")
    return wall, cpu, peak, text


def _has_model_garden(python):
    """Whether `python` finds TF Model Garden's package, without importing it (or TensorFlow)."""
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('official') is None)"
    return subprocess.run([python, "-c", probe], check=False).returncode == 0


def _commands(args, outputs):
    common = [f"--input_file={args.input_file}", f"--vocab_file={args.vocab_file}",
              "--do_lower_case=True", f"--max_seq_length={args.max_seq_length}",
              f"--max_predictions_per_seq={args.max_predictions_per_seq}",
              f"--dupe_factor={args.dupe_factor}", "--random_seed=12345",
              "--masked_lm_prob=0.15", "--short_seq_prob=0.1"]
    ours = [sys.executable, str(REPO / "create_pretraining_data.py")]
    return {
        "peer": [args.peer_python, "-m", "official.nlp.data.create_pretraining_data",
                 f"--output_file={','.join(outputs['peer'])}", *common],
        "exact": [*ours, f"--output_file={','.join(outputs['exact'])}", *common],
        "fast": [*ours, f"--output_file={','.join(outputs['fast'])}", *common,
                 f"--num_workers={args.num_workers}"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer_python",
                        help="python of a venv with tf-models-official installed (the peer "
                             "runs only with it)")
    parser.add_argument("--input_file", type=path_argument,
                        default=str(SHARED_DATA / "corpus" / "gutenberg_pretrain.txt"))
    parser.add_argument("--vocab_file", type=path_argument,
                        default=str(SHARED_DATA / "vocab" / "bert-base-uncased-vocab.txt"))
    parser.add_argument("--dupe_factor", type=int, default=5)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--num_workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="rounds of every tool")
    parser.add_argument("--tools", default="peer,exact,fast",
                        help="of peer, exact, fast; peer only with --peer_python")
    parser.add_argument("--input_copies", type=int, default=1,
                        help="feed this many copies of the input, as separate files")
    args = parser.parse_args()
    if args.peer_python and not shutil.which(args.peer_python):
        parser.error(f"--peer_python={args.peer_python}: no such program (the python of a venv "
                     "set up as this script's docstring says)")
    if args.peer_python and not _has_model_garden(args.peer_python):
        parser.error(f"--peer_python={args.peer_python}: has no TF Model Garden (no module "
                     "'official'); install tf-models-official there as this script's docstring "
                     "says")

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = str(REPO)
    tools = [tool for tool in args.tools.split(",") if tool != "peer" or args.peer_python]
    if set(tools) - set(_START):
        parser.error(f"--tools={args.tools}: each must be one of {', '.join(_START)}")
    input_name = pathlib.Path(args.input_file).name
    rounds = {tool: [] for tool in tools}
    with tempfile.TemporaryDirectory() as folder, BenchRun() as run:
        if args.input_copies > 1:
            text = pathlib.Path(args.input_file).read_bytes()
            copies = [f"{folder}/copy-{i}.txt" for i in range(args.input_copies)]
            for copy in copies:
                pathlib.Path(copy).write_bytes(text)
            args.input_file = ",".join(copies)
        outputs = {tool: [f"{folder}/{tool}-{i}.tfrecord" for i in range(2)]
                   for tool in _START}
        commands = _commands(args, outputs)
        for round_ in range(args.repeats):
            for tool in tools:
                wall, cpu, peak, log = _run(commands[tool], env)
                row = {"instances": _count_records(outputs[tool]), "wall": wall,
                       "work": _work_seconds(log, _START[tool]), "cpu": cpu,
                       "peak_mb": peak / 2**20}
                print(f"round {round_ + 1} {tool}: " + ", ".join(
                    f"{k}={v:.1f}" for k, v in row.items()), file=sys.stderr, flush=True)
                rounds[tool].append(row)
    print(run.header(f"{args.input_copies} x {input_name}, dupe_factor={args.dupe_factor}, "
                     f"max_seq_length={args.max_seq_length}, fast mode with "
                     f"{args.num_workers} workers; {args.repeats} rounds, tools in turn"
                     + ("" if args.peer_python else "; no --peer_python: no Model Garden row")))
    print(markdown_table(("tool",), [_row(tool, rounds) for tool in tools], run.threads,
                         unit="inst", time_unit="s",
                         extra_names=("median work s", "inst/s work", "x peer wall",
                                      "x peer work", "peak MB")))


def _rates(results):
    """Instances per second over the median wall and work times of a tool's rounds."""
    instances = results[-1]["instances"]
    return tuple(instances / statistics.median(r[key] for r in results)
                 for key in ("wall", "work"))


def _row(tool, rounds):
    """The tool's `TimedRow`: wall times per round, then work time, ratios and memory."""
    results = rounds[tool]
    rates = _rates(results)
    ratios = ("-", "-")
    if "peer" in rounds:
        ratios = tuple(f"{ours / peer:.1f}" for ours, peer in zip(rates, _rates(rounds["peer"])))
    work = statistics.median(r["work"] for r in results)
    peak_mb = max(r["peak_mb"] for r in results)
    return TimedRow((NAMES[tool],), [(r["wall"], r["cpu"]) for r in results],
                    results[-1]["instances"],
                    extra=(f"{work:.1f}", f"{rates[1]:.0f}", *ratios, f"{peak_mb:.0f}"))


if __name__ == "__main__":
    main()
