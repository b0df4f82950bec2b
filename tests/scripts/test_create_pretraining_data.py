"""create_pretraining_data.py from the command line, as users of the original run it."""

import os
import signal
import subprocess
import sys
import time

import tensorflow as tf

from tests_shared import REPO, run_script, shared_path, wait_for_line


def _run(*flags):
    return run_script("create_pretraining_data.py", *flags)


def _examples(*paths):
    return [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(
        [str(p) for p in paths])]


def test_original_command_line_writes_the_original_records(tmp_path, uncased_vocab_file):
    outputs = [tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"]
    result = _run(f"--input_file={shared_path('corpus', 'sample_text.txt')}",
                  f"--output_file={outputs[0]},{outputs[1]}",
                  f"--vocab_file={uncased_vocab_file}", "--do_lower_case=True",
                  "--max_seq_length=128", "--max_predictions_per_seq=20",
                  "--masked_lm_prob=0.15", "--random_seed=12345", "--dupe_factor=10")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "wrote 118 instances" in result.stderr
    golden = _examples(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    parts = [_examples(p) for p in outputs]
    assert [parts[i % 2][i // 2] for i in range(len(golden))] == golden


def test_fast_mode_from_the_command_line(tmp_path, uncased_vocab_file):
    output = tmp_path / "fast.tfrecord"
    result = _run(f"--input_file={shared_path('golden', 'gutenberg30.txt')}",
                  f"--output_file={output}", f"--vocab_file={uncased_vocab_file}",
                  "--dupe_factor=1", "--num_workers=2", "--shard_bytes=100000")
    assert result.returncode == 0, result.stderr[-3000:]
    # 308 kB of text in shards of 100 kB.
    assert "shard 3:" in result.stderr and "shard 4:" not in result.stderr
    assert f"wrote {len(_examples(output))} instances" in result.stderr


def test_bad_flags_get_a_clear_message(tmp_path, uncased_vocab_file):
    result = _run(f"--input_file={shared_path('corpus', 'sample_text.txt')}",
                  f"--output_file={tmp_path / 'out.tfrecord'}",
                  f"--vocab_file={uncased_vocab_file}", "--max_seq_length=4")
    assert result.returncode != 0
    assert "--max_seq_length must be >= 5" in result.stderr
    assert "Traceback" not in result.stderr


def test_flags_that_would_be_dropped_or_garble_the_records_are_refused(tmp_path,
                                                                       uncased_vocab_file):
    """`--shard_bytes` without fast mode was ignored without a word; `--do_lower_case=False`
    with an uncased vocabulary wrote records with every capitalised word `[UNK]`, where the
    runners refuse it; missing flags were named on three lines."""
    corpus = f"--input_file={shared_path('corpus', 'sample_text.txt')}"
    output = f"--output_file={tmp_path / 'out.tfrecord'}"
    vocab = f"--vocab_file={uncased_vocab_file}"
    for flags, expected in (
            ((corpus, output, vocab, "--shard_bytes=1000"),
             "--shard_bytes applies only in fast mode (--num_workers=N, N > 1)"),
            ((corpus, output, vocab, "--do_lower_case=False"),
             f"--do_lower_case=False, but --vocab_file={uncased_vocab_file} has no capital "
             "letters"),
            ((vocab,), "required flags not given: --input_file, --output_file (--help")):
        result = _run(*flags)
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stderr.strip().splitlines()[-1].startswith(
            f"create_pretraining_data: error: {expected}"), result.stderr[-2000:]
        assert os.listdir(tmp_path) == []


def test_an_input_glob_that_matches_nothing_is_a_usage_error(tmp_path, uncased_vocab_file):
    """As in learn_vocab and run_pretraining: exit 2, naming the flag (it exited 1)."""
    result = _run(f"--input_file={tmp_path}/corpus-*.txt",
                  f"--output_file={tmp_path / 'out.tfrecord'}",
                  f"--vocab_file={uncased_vocab_file}")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"create_pretraining_data: error: --input_file: input pattern "
        f"'{tmp_path}/corpus-*.txt' matches no file")
    assert os.listdir(tmp_path) == []


def test_an_output_over_the_input_is_refused_in_one_line(tmp_path, uncased_vocab_file):
    # Errors from the data modules (here the output check; a glob matching no
    # file or a binary input alike) end the run with one line, nothing written.
    text = tmp_path / "corpus.txt"
    text.write_bytes(shared_path("corpus", "sample_text.txt").read_bytes())
    result = _run(f"--input_file={tmp_path}/*.txt",
                  f"--output_file={tmp_path / 'out.tfrecord'},{text}",
                  f"--vocab_file={uncased_vocab_file}")
    assert result.returncode == 2  # a wrong command line
    assert (f"create_pretraining_data: error: output_file {text} is the input_file {text}: "
            "refusing to write over a file the run reads\n") in result.stderr
    assert "Traceback" not in result.stderr
    assert os.listdir(tmp_path) == ["corpus.txt"]
    assert text.read_bytes() == shared_path("corpus", "sample_text.txt").read_bytes()


def _start_on_gutenberg(output, vocab_file, log, *flags):
    """A process of the script on the Gutenberg corpus (20 duplicates: long enough to
    signal), its stderr going to `log`, in a process group of its own (its id the
    process's)."""
    with open(log, "w") as stderr:
        return subprocess.Popen(
            [sys.executable, str(REPO / "create_pretraining_data.py"),
             f"--input_file={shared_path('corpus', 'gutenberg_pretrain.txt')}",
             f"--output_file={output}", f"--vocab_file={vocab_file}", "--dupe_factor=20",
             *flags], stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)


def test_ctrl_c_ends_with_one_line_and_leaves_the_earlier_output(tmp_path, uncased_vocab_file):
    """A real SIGINT while records are made: exit 130, no traceback, nothing half-written."""
    output = tmp_path / "out.tfrecord"
    output.write_bytes(b"an earlier run's records")
    log = tmp_path / "stderr.txt"
    process = _start_on_gutenberg(output, uncased_vocab_file, log)
    try:
        wait_for_line(log, r"read \d+ documents", process)
        process.send_signal(signal.SIGINT)
        returncode = process.wait(timeout=120)
    finally:
        process.kill()
    text = log.read_text()
    assert returncode == 128 + signal.SIGINT, text[-3000:]
    assert text.strip().splitlines()[-1] == (
        "create_pretraining_data: error: interrupted by SIGINT (Ctrl-C)")
    assert "Traceback" not in text
    assert output.read_bytes() == b"an earlier run's records"
    assert sorted(os.listdir(tmp_path)) == ["out.tfrecord", "stderr.txt"]


def test_sigterm_in_fast_mode_ends_with_one_line_and_leaves_no_shards(tmp_path,
                                                                      uncased_vocab_file):
    """A real SIGTERM to the whole process group (as a scheduler sends it) mid-run: the
    half-written shards go, the earlier output stays (it died silently, 128 + 15 by the
    signal, and left its `.tmp-PID` files)."""
    output = tmp_path / "out.tfrecord"
    output.write_bytes(b"an earlier run's records")
    log = tmp_path / "stderr.txt"
    process = _start_on_gutenberg(output, uncased_vocab_file, log, "--num_workers=2",
                                  "--shard_bytes=100000")
    try:
        wait_for_line(log, r"shard 0: \d+ documents", process)
        os.killpg(process.pid, signal.SIGTERM)
        returncode = process.wait(timeout=120)
    finally:
        process.kill()
    text = log.read_text()
    assert returncode == 128 + signal.SIGTERM, text[-3000:]
    assert text.strip().splitlines()[-1] == "create_pretraining_data: error: terminated by SIGTERM"
    assert "Traceback" not in text
    assert output.read_bytes() == b"an earlier run's records"
    assert sorted(os.listdir(tmp_path)) == ["out.tfrecord", "stderr.txt"]


def _alive_children(pid):
    """Live processes whose parent is `pid` (from /proc: no process library needed)."""
    children = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                state, parent = f.read().rsplit(")", 1)[1].split()[:2]
        except OSError:  # gone meanwhile
            continue
        if int(parent) == pid and state != "Z":
            children.append(int(entry))
    return children


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_fast_mode_workers_end_with_a_killed_parent(tmp_path, uncased_vocab_file):
    """SIGKILL runs no clean-up: the spawned workers must notice and end on their own."""
    log = tmp_path / "stderr.txt"
    process = _start_on_gutenberg(tmp_path / "out.tfrecord", uncased_vocab_file, log,
                                  "--num_workers=2", "--shard_bytes=100000")
    children = []
    try:
        wait_for_line(log, r"shard 0: \d+ documents", process)
        children = _alive_children(process.pid)
        assert len(children) >= 2, children  # the workers (and the resource tracker)
        process.kill()
        process.wait(timeout=30)
        deadline = time.time() + 30
        while time.time() < deadline and any(map(_alive, children)):
            time.sleep(0.1)
        assert not [pid for pid in children if _alive(pid)]
    finally:
        process.kill()
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert not (tmp_path / "out.tfrecord").exists()
