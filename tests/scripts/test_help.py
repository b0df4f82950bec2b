"""`--help` of every script: the script's docstring and its own flags, exit 0.

absl's own `--help` showed the root wrapper's one-line docstring (or only
"USAGE: ... [flags]" for a console script) and exited 1; its `--helpfull`
buries the script's flags among absl's and TensorFlow's.
"""

import os
import sys

import pytest

from tests_shared import REPO, load_script, run_script

# The root scripts: the wrappers of the bert_tf.scripts modules of the same name.
SCRIPTS = sorted(path.name for path in REPO.glob("*.py")
                 if (REPO / "bert_tf" / "scripts" / path.name).exists())
# Internal flags that --helpfull lists and --help must not (absl, absltest, TensorFlow).
INTERNAL_FLAGS = ("--test_srcdir", "--verbosity", "--logtostderr", "--flagfile",
                  "--tt_check_filter", "--helpxml")


def test_every_root_script_is_covered():
    assert len(SCRIPTS) == 10, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_shows_docstring_and_own_flags_only(script):
    result = run_script(script, "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    module = load_script(script)
    assert module.__doc__.splitlines()[0] in result.stdout
    assert "--[no]verbose: Show the full traceback of errors." in result.stdout
    assert not [flag for flag in INTERNAL_FLAGS if flag in result.stdout]


@pytest.mark.parametrize("script, docstring_line, flag_help", [
    ("run_classifier.py", "(the original's keys plus the task's GLUE metrics)",
     "--task_name: The name of the task to train."),
    ("run_classifier.py", "Tasks: cola, sst-2, mrpc",
     "--max_seq_length: Sequence length after WordPiece; longer inputs are"),
    ("run_classifier.py", "our choice, since the paper does not say (docs/ORIGINAL_BEHAVIOUR.md).",
     "--init_checkpoint: Pretrained weights"),
    ("run_squad.py", "Writes predictions.json, nbest_predictions.json",
     "--max_seq_length: Sequence length after WordPiece"),
    ("export_savedmodel.py", "`--model_dir` is a folder written by our runners",
     "--kind: <classifier|encoder|masked_lm|multiple_choice|ner|span_qa>: What the"),
])
@pytest.mark.parametrize("help_arg", ["--help", "-h", "--helpshort"])
def test_help_of_a_script(script, docstring_line, flag_help, help_arg):
    result = run_script(script, help_arg)
    assert result.returncode == 0, result.stderr[-2000:]
    assert docstring_line in result.stdout
    assert flag_help in result.stdout


def test_help_shows_defaults_and_ignores_required_flags():
    # run_classifier requires --output_dir; help needs none.
    result = run_script("run_classifier.py", "--task_name=MRPC", "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--xnli_language: XNLI language (the original fixed zh).\n    (default: 'zh')" in (
        result.stdout)
    assert "--train_batch_size: Total batch size for training.\n    (default: '32')" in (
        result.stdout)


def test_helpfull_still_lists_every_flag():
    result = run_script("run_classifier.py", "--helpfull")
    assert "--task_name" in result.stdout
    assert "--test_srcdir" in result.stdout


def test_only_flags_ask_for_help():
    from bert_tf.scripts.cli import _asks_for_help
    assert _asks_for_help(["run_squad.py", "--do_train", "-h"])
    assert not _asks_for_help(["run_squad.py", "--", "--help"])  # an argument, not a flag


def test_help_into_a_closed_pipe_ends_quietly(monkeypatch, capfd):
    """`run_swag.py --help | head -1`, head gone: exit 141 (SIGPIPE's) without a traceback."""
    module = load_script("run_swag.py")
    read_end, write_end = os.pipe()
    os.close(read_end)
    with open(write_end, "w") as closed_pipe:
        monkeypatch.setattr(sys, "stdout", closed_pipe)
        monkeypatch.setattr(sys, "argv", ["run_swag.py", "--help"])
        with pytest.raises(SystemExit) as stop:
            module.console_main()
        assert stop.value.code == 141
        closed_pipe.write("what exit's flush would write")  # now to /dev/null, quietly
    assert capfd.readouterr().err == ""
