"""Starts a script, so that a Ctrl-C while it loads ends in one line, not a traceback.

A script spends its first seconds importing TensorFlow (and its own
modules, which import it), before `cli.run_main` sets up the error policy.
A Ctrl-C in those seconds used to end in Python's `KeyboardInterrupt`
traceback, some thirty lines through TensorFlow's import machinery. The
root wrappers (`python run_squad.py`) and the installed commands
(`bert_run_squad`) therefore import their script here, under the same rule
as the rest of the run: one line on stderr and exit 130. This module
itself imports nothing heavy, so a Ctrl-C before it takes over falls in the
few milliseconds Python needs to start.

Example: what the installed command `bert_run_squad` calls.

>>> print(run_squad.__doc__)
The `bert_run_squad` command: `launch('run_squad')`.
"""

import importlib
import signal
import sys


def launch(program):
    """Imports `bert_tf.scripts.<program>` and runs its `console_main` (never returns).

    Args:
        program: the script's name, e.g. "run_squad"; also the name its
            error messages start with.
    """
    try:
        script = importlib.import_module(f"bert_tf.scripts.{program}")
    except KeyboardInterrupt:
        sys.stderr.write(f"{program}: error: interrupted by SIGINT (Ctrl-C) while starting\n")
        sys.exit(128 + signal.SIGINT)
    script.console_main()


def _command(program):
    """The function that an installed command (`bert_<program>`) calls."""
    def command():
        launch(program)
    command.__name__ = command.__qualname__ = program
    command.__doc__ = f"The `bert_{program}` command: `launch({program!r})`."
    return command


# What setup.py's console scripts call, e.g. `bert_run_squad=bert_tf.launch:run_squad`.
classify_text = _command("classify_text")
create_pretraining_data = _command("create_pretraining_data")
export_savedmodel = _command("export_savedmodel")
extract_features = _command("extract_features")
learn_vocab = _command("learn_vocab")
run_classifier = _command("run_classifier")
run_ner = _command("run_ner")
run_pretraining = _command("run_pretraining")
run_squad = _command("run_squad")
run_swag = _command("run_swag")
