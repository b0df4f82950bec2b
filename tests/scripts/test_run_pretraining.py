"""run_pretraining.py as a user runs it: killed and restarted, the README command, bad flags."""

import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.training.init_checkpoint import initialize_from_checkpoint
from bert_tf.training.precision import bfloat16_emulation_note
from tests_shared import run_script, shared_path
from training.pretraining_runs import (ONE_LAYER_CONFIG, TINY_CONFIG, environment,
                                       golden_records, pretraining_command, pretraining_flags)

STEPS = 40


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory, uncased_vocab_file):
    """A run killed with SIGKILL after its first checkpoint, then started again.

    The killed run is a process of its own; the same command started again runs
    in this one (`run_script`): what it resumes from is all in its folder.
    """
    folder = tmp_path_factory.mktemp("run")
    output_dir = folder / "out"
    flags = ("--do_train", "--do_eval", "--train_batch_size=8", f"--num_train_steps={STEPS}",
             "--num_warmup_steps=5", "--save_checkpoints_steps=5", "--iterations_per_loop=5",
             "--max_eval_steps=3", "--mixed_precision=mixed_bfloat16",
             f"--vocab_file={uncased_vocab_file}")
    first = subprocess.Popen(pretraining_command(str(folder), str(output_dir), *flags),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, env=environment())
    deadline = time.time() + 300
    while tf.train.latest_checkpoint(str(output_dir)) is None:  # ckpt-5 written and listed
        assert first.poll() is None, first.stderr.read()[-3000:]
        assert time.time() < deadline, "no first checkpoint after 300 s"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    killed_at = int(tf.train.latest_checkpoint(str(output_dir)).rsplit("-", 1)[1])
    second = run_script("run_pretraining.py",
                        *pretraining_flags(str(folder), str(output_dir), *flags))
    return {"output_dir": output_dir, "killed_at": killed_at, "result": second,
            "first_returncode": first.returncode}


def test_killed_run_resumes_from_its_last_checkpoint(resumed_run):
    result, output_dir = resumed_run["result"], resumed_run["output_dir"]
    assert resumed_run["first_returncode"] == -signal.SIGKILL
    assert 5 <= resumed_run["killed_at"] < STEPS
    assert result.returncode == 0, result.stderr[-3000:]
    resumed = re.search(r"resumed from \S+ckpt-(\d+) at step (\d+)", result.stderr)
    assert resumed, result.stderr[-3000:]
    assert int(resumed.group(1)) == int(resumed.group(2)) == resumed_run["killed_at"]
    # The resumed run's first call builds the step and runs one (training/call_sizes.py).
    first_line = re.search(rf"step (\d+)/{STEPS} loss=", result.stderr)
    assert int(first_line.group(1)) == resumed_run["killed_at"] + 1
    assert tf.train.latest_checkpoint(str(output_dir)).endswith(f"ckpt-{STEPS}")


def test_progress_lines_and_eval_results(resumed_run):
    stderr, output_dir = resumed_run["result"].stderr, resumed_run["output_dir"]
    line = re.findall(rf"step {STEPS}/{STEPS} (.*)", stderr)[0]
    for key in ("loss=", "masked_lm_accuracy=", "learning_rate=", "sequences/s="):
        assert key in line
    # The first call, which traces the step, is announced before and timed after, once.
    assert stderr.count("building the training step: tracing; the first call takes") == 1
    built = re.findall(r"the first call of the training step took ([\d.]+) s, building", stderr)
    assert len(built) == 1 and float(built[0]) > 0
    assert stderr.index("building the training step") < stderr.index(f"step {STEPS}/{STEPS}")
    results = dict(l.split(" = ") for l in (output_dir / "eval_results.txt").read_text()
                   .splitlines())
    assert list(results) == ["global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
                             "next_sentence_accuracy", "next_sentence_loss"]
    assert results["global_step"] == str(STEPS)
    assert 0 < float(results["masked_lm_loss"]) < float(results["loss"])


def test_mixed_bfloat16_warns_exactly_where_the_cpu_emulates_it(resumed_run):
    stderr = resumed_run["result"].stderr
    emulated = bfloat16_emulation_note("mixed_bfloat16", ["/device:CPU:0"]) is not None
    assert ("on a CPU without bfloat16 instructions" in stderr) == emulated, stderr[-3000:]


def test_final_model_is_an_original_release_folder(resumed_run):
    """bert_model.ckpt (original names) holds the weights of the last training checkpoint."""
    output_dir = resumed_run["output_dir"]
    assert {"bert_model.ckpt.index", "bert_config.json", "vocab.txt"} <= set(
        os.listdir(output_dir))
    names = dict(tf.train.list_variables(str(output_dir / "bert_model.ckpt")))
    assert names["cls/predictions/output_bias"] == [30522]
    assert names["cls/seq_relationship/output_weights"] == [2, 32]
    config = BertConfig.from_json_file(str(output_dir / "bert_config.json"))
    assert config.to_dict() == TINY_CONFIG
    exported, trained = BertPretrainer(config), BertPretrainer(config)
    initialize_from_checkpoint(exported, str(output_dir / "bert_model.ckpt"))
    initialize_from_checkpoint(trained, str(output_dir))  # the newest ckpt-N
    for a, b in zip(exported.weights, trained.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_original_readme_command_runs_unchanged(resumed_run, tmp_path):
    """The README's flags, starting from the run's exported original checkpoint."""
    init = resumed_run["output_dir"]
    result = run_script("run_pretraining.py", *pretraining_flags(
        str(tmp_path), str(tmp_path / "pretraining_output"), "--do_train=True",
        "--do_eval=True", f"--init_checkpoint={init / 'bert_model.ckpt'}",
        "--train_batch_size=32", "--num_train_steps=20", "--num_warmup_steps=10",
        "--learning_rate=2e-5"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "restored" in result.stderr and "resumed" not in result.stderr
    results = (tmp_path / "pretraining_output" / "eval_results.txt").read_text()
    assert "global_step = 20\n" in results


def test_an_eval_batch_larger_than_the_evaluation_data_is_named(resumed_run, tmp_path):
    """It ended with "evaluation dataset yielded no batch (fewer examples than
    eval_batch_size?)", naming no file or flag."""
    result = run_script("run_pretraining.py", *pretraining_flags(
        str(tmp_path), str(tmp_path / "out"), "--do_eval", "--eval_batch_size=1000",
        f"--init_checkpoint={resumed_run['output_dir']}"))
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.strip().splitlines()[-1] == (
        f"run_pretraining: error: --eval_batch_size=1000: --eval_input_file={golden_records()} "
        "holds fewer examples than one batch (pretraining evaluates whole batches); give a "
        "smaller --eval_batch_size")


def test_dynamic_masking_trains_on_raw_text(tmp_path, uncased_vocab_file):
    """--dynamic_masking: sample_text.txt paired and masked in tf.data, then evaluated."""
    output_dir = tmp_path / "out"
    flags = with_input_file(
        pretraining_flags(str(tmp_path), str(output_dir), "--do_train", "--do_eval",
                          "--dynamic_masking", "--do_whole_word_mask",
                          f"--vocab_file={uncased_vocab_file}", "--train_batch_size=8",
                          "--num_train_steps=10", "--num_warmup_steps=2",
                          "--iterations_per_loop=5", "--max_eval_steps=2",
                          config=ONE_LAYER_CONFIG),
        str(shared_path("corpus", "sample_text.txt")))
    result = run_script("run_pretraining.py", *flags)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "step 10/10 loss=" in result.stderr
    results = dict(l.split(" = ") for l in (output_dir / "eval_results.txt").read_text()
                   .splitlines())
    assert results["global_step"] == "10"
    assert 0 < float(results["masked_lm_loss"]) < float(results["loss"])
    assert 0 <= float(results["next_sentence_accuracy"]) <= 1


def with_input_file(flags, input_file):
    index = flags.index(next(a for a in flags if a.startswith("--input_file")))
    return flags[:index] + [f"--input_file={input_file}"] + flags[index + 1:]


def test_bad_flags_are_named(tmp_path, uncased_vocab_file):
    missing = with_input_file(pretraining_flags(str(tmp_path), str(tmp_path / "a"),
                                                "--do_train"),
                              "/nonexistent/*.tfrecord")
    neither = pretraining_flags(str(tmp_path), str(tmp_path / "b"))
    no_vocab = pretraining_flags(str(tmp_path), str(tmp_path / "c"), "--do_train",
                                 "--dynamic_masking")
    missing, neither, no_vocab = [run_script("run_pretraining.py", *flags)
                                  for flags in (missing, neither, no_vocab)]
    assert all(run.returncode != 0 for run in (missing, neither, no_vocab))
    assert ("--input_file: input pattern '/nonexistent/*.tfrecord' matches no file"
            in missing.stderr)
    assert "At least one of `do_train` or `do_eval` must be True." in neither.stderr
    assert "--dynamic_masking needs --vocab_file" in no_vocab.stderr
    # Flags the run would ignore are refused before any work.
    for extra, message in (("--do_whole_word_mask", "--do_whole_word_mask applies only with "
                                                    "--dynamic_masking"),
                           ("--masked_lm_prob=0.3", "--masked_lm_prob applies only with"),
                           ("--causal --nsp", "--causal trains no next-sentence head"),
                           # the left-to-right model's text is unmasked: it trained the same
                           ("--causal --dynamic_masking --masked_lm_prob=0.3",
                            "--masked_lm_prob applies only without --causal (a left-to-right "
                            "model reads the text unmasked and predicts every next token)"),
                           # device flags the strategy would ignore (it trained on the CPU)
                           ("--tpu_name=my-tpu", "--tpu_name applies only with --use_tpu or "
                                                 "--distribution_strategy=tpu (this run: "
                                                 "one_device)"),
                           ("--master=grpc://10.0.0.2:8470", "--master applies only with"),
                           ("--num_gpus=2", "--num_gpus applies only with "
                                            "--distribution_strategy=mirrored (this run: "
                                            "one_device)"),
                           ("--worker_wait_seconds=60", "--worker_wait_seconds applies only "
                                                        "with --distribution_strategy="
                                                        "multi_worker_mirrored"),
                           ("--use_tpu --distribution_strategy=mirrored",
                            "--use_tpu contradicts --distribution_strategy=mirrored"),
                           # dynamic masking draws the targets among the sequence's tokens
                           (f"--dynamic_masking --vocab_file={uncased_vocab_file} "
                            "--max_seq_length=16 --max_predictions_per_seq=20",
                            "--max_predictions_per_seq must be at most max_seq_length (16) "
                            "with dynamic masking, got 20"),
                           # what the export at the end would lack
                           (f"--export_dir={tmp_path / 'served'}",
                            "--export_dir: a masked-LM SavedModel needs --vocab_file")):
        run = run_script("run_pretraining.py", *pretraining_flags(
            str(tmp_path), str(tmp_path / "d"), "--do_train", "--num_train_steps=1",
            "--num_warmup_steps=0", *extra.split()))
        assert run.returncode == 2 and f"run_pretraining: error: {message}" in run.stderr
    assert not (tmp_path / "d").exists() and not (tmp_path / "served").exists()


def test_an_input_file_deleted_during_training_is_told_in_one_line(tmp_path):
    """The reading op fails inside the training step's `tf.function`: TensorFlow's message
    ran over eight lines ("Graph execution error:", the node, the stack, the op)."""
    from bert_tf.scripts.cli import error_line
    path = str(tmp_path / "train.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(b"record")
    records = iter(tf.data.TFRecordDataset(path).repeat())
    read = tf.function(lambda: next(records))
    read()
    os.remove(path)
    with pytest.raises(tf.errors.NotFoundError) as error:
        for _ in range(3):  # the next epoch opens the file again
            read()
    assert error_line(error.value) == f"{path}; No such file or directory"
