"""Pretraining-data creation speed: ours (exact and fast mode) vs TF Model Garden.

TF Model Garden's `official.nlp.data.create_pretraining_data` is a port of the
original tool; it needs tensorflow 2.20, so it lives in its own virtual
environment outside the repository:

    python3 -m venv /tmp/mg_venv
    /tmp/mg_venv/bin/pip install tensorflow==2.20.0 tf-models-official==2.20.0
    .venv/bin/python bench/pretraining_data_speed.py --peer_python=/tmp/mg_venv/bin/python

Each tool runs as its own process with the same flags on the same input,
one after another (`--repeats` rounds, best round kept, to be fair on a
machine shared with other work). For each it prints instances written,
wall time, work time (from the tool's first log line after its imports to
its last, i.e. without interpreter and library start-up), instances per
second over both, CPU seconds (all processes) and peak memory (proportional
set size summed over the process tree, so pages shared between processes
count once; sampled every 100 ms).
"""

import argparse
import datetime
import os
import pathlib
import re
import resource
import struct
import subprocess
import sys
import tempfile
import time

import psutil

REPO = pathlib.Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
_LOG_TIME = re.compile(r"^[IWE](\d{4}) (\d\d:\d\d:\d\d\.\d+) ", re.M)
# First log line of the real work (after imports) of each tool.
_START = {"peer": "*** Reading from input files ***", "exact": "exact mode:",
          "fast": "fast mode,"}


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
    parser.add_argument("--peer_python", required=True,
                        help="python of a venv with tf-models-official installed")
    parser.add_argument("--input_file", default=str(SHARED / "corpus" / "gutenberg_pretrain.txt"))
    parser.add_argument("--vocab_file",
                        default=str(SHARED / "vocab" / "bert-base-uncased-vocab.txt"))
    parser.add_argument("--dupe_factor", type=int, default=5)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--num_workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--tools", default="peer,exact,fast")
    parser.add_argument("--input_copies", type=int, default=1,
                        help="feed this many copies of the input, as separate files")
    args = parser.parse_args()

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = str(REPO)
    tools = args.tools.split(",")
    input_name = pathlib.Path(args.input_file).name
    best = {}
    with tempfile.TemporaryDirectory() as folder:
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
                    f"{k}={v:.1f}" for k, v in row.items()), flush=True)
                if tool not in best or row["wall"] < best[tool]["wall"]:
                    best[tool] = row

    print(f"\n{args.input_copies} x {input_name}, "
          f"dupe_factor={args.dupe_factor}, "
          f"max_seq_length={args.max_seq_length}, {os.cpu_count()} cores, "
          f"fast mode with {args.num_workers} workers; best of {args.repeats}")
    header = ("tool", "instances", "wall s", "work s", "inst/s wall", "inst/s work",
              "x peer wall", "x peer work", "CPU s", "peak MB")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    peer = best.get("peer")
    for tool, row in best.items():
        rate_wall, rate_work = row["instances"] / row["wall"], row["instances"] / row["work"]
        ratios = ("-", "-")
        if peer:
            ratios = (f"{rate_wall / (peer['instances'] / peer['wall']):.1f}",
                      f"{rate_work / (peer['instances'] / peer['work']):.1f}")
        print(f"| {tool} | {row['instances']} | {row['wall']:.1f} | {row['work']:.1f} | "
              f"{rate_wall:.0f} | {rate_work:.0f} | {ratios[0]} | {ratios[1]} | "
              f"{row['cpu']:.1f} | {row['peak_mb']:.0f} |")


if __name__ == "__main__":
    main()
