"""The one error policy and entry point of every script.

Expected failures (a bad flag, file, data or checkpoint: `ValueError`,
`OSError`, a non-finite loss, corrupt data, a stop on a signal) print one
line that names the flag, file or line, without a traceback, as the last
line of stderr; `--verbose` adds the traceback. A Ctrl-C outside training
(reading data, predicting, exporting), or a second one during it, ends the
run where it is with one such line, and so does a SIGTERM outside training
(a scheduler's or `kill`'s stop); a Ctrl-C while the script is imported,
before `run_main`, is `launch`'s, and ends in one line as well. Files are written whole or not
at all, and the temporary files of those being written are removed.
A reader of stdout that goes away (`classify_text.py ... | head`)
ends the run quietly, as it ends Unix tools.
Exit codes: 2 for usage errors (flags that cannot work, including flag
parsing), 128 + N after a stop on signal N (a stop in training saves a
checkpoint; rerun to resume; 141, SIGPIPE's, when stdout's reader went away),
1 for everything else that went wrong, 0 on success.

`--help` (also `-h`, `--helpshort`) shows the script's docstring and its
own flags and exits 0; `--helpfull` lists absl's and TensorFlow's flags too
(and exits 1: absl's own handling).

The flags that name files and folders get a leading `~` expanded, as a shell
does not after `--flag=`, and a name that is not UTF-8 is refused
(`resolve_path_flags`).
"""

import logging
import os
import re
import signal
import sys
import threading
import traceback

import tensorflow as tf
from absl import app, flags

from bert_tf.errors import UsageError, tensorflow_error_line
from bert_tf.script_output import StdoutClosed, end_with_stdout_closed, print_output
from bert_tf.training.interrupts import TrainingStopped

FLAGS = flags.FLAGS
flags.DEFINE_bool("verbose", False, "Show the full traceback of errors.")

USAGE_EXIT_CODE = 2
ERROR_EXIT_CODE = 1
# absl's --help/--helpshort/-? print the root wrapper's docstring and exit 1; -h is ours.
HELP_ARGS = ("-h", "-?", "--help", "--helpshort")
# Besides the script's module, where a script's flags are defined: `--verbose`
# here, the runners' shared flags in `runner_flags` (those the script defined).
SHARED_FLAG_MODULES = ("bert_tf.scripts.runner_flags", __name__)
# How the names of the flags that name files and folders end (`--vocab_file`,
# `--output_dir`, `--init_checkpoint`): `resolve_path_flags`.
PATH_FLAG_ENDINGS = ("_file", "_dir", "_checkpoint")
# What a user can fix; anything else is a bug and keeps its traceback. TensorFlow's
# file errors name the file: a full disk or memory (ResourceExhausted), a read-only
# folder (PermissionDenied). (Its FailedPrecondition is also a bug's error; paths
# under a file are refused before any work instead.)
EXPECTED_ERRORS = (ValueError, OSError, TrainingStopped, tf.errors.DataLossError,
                   tf.errors.NotFoundError, tf.errors.ResourceExhaustedError,
                   tf.errors.PermissionDeniedError)


def error_line(error):
    """The one line that tells `error`: TensorFlow's without its framing, a file's error
    as "PATH: reason" (Python's "[Errno 21] Is a directory: 'PATH'")."""
    if isinstance(error, tf.errors.OpError):
        return tensorflow_error_line(error)
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return getattr(error, "message", None) or str(error) or type(error).__name__


def _fail(program, error, exit_code):
    verbose = FLAGS.is_parsed() and FLAGS.verbose
    if verbose:
        traceback.print_exception(error)
    sys.stderr.write(f"{program}: error: {error_line(error)}\n")
    if not verbose:
        # Only teardown follows, and its log lines would bury the error: e.g.
        # TensorFlow's warnings about a checkpoint left half-restored.
        logging.disable(logging.CRITICAL)
    sys.exit(exit_code)


class _Terminated(KeyboardInterrupt):
    """A SIGTERM outside training: the run ends where it is, as on a Ctrl-C.

    By default SIGTERM kills Python at once, without a word and with no
    clean-up: fast-mode pretraining data left its `.tmp-PID` shards (gigabytes)
    beside the outputs. Training catches SIGTERM itself (`StopSignals`, which
    sets its own handler for its duration).
    """


def _terminate(signal_number, frame):
    raise _Terminated


def refuse_unused_flags(names, applies):
    """Refuses flags among `names` given a value the run would ignore.

    A flag given its default is let through (it changes nothing).

    Args:
        names: flag names that take effect only in some runs.
        applies: when they do, for the message, e.g. "with --dynamic_masking".

    Raises:
        UsageError: naming the first such flag, and when it applies.
    """
    for name in names:
        if FLAGS[name].present and FLAGS[name].value != FLAGS[name].default:
            raise UsageError(f"--{name} applies only {applies}")


def check_export_dir_flag(export_dir):
    """Refuses, before any work, an `--export_dir` an export could not replace or write.

    The runners' rule for `--export_dir` (`tasks.runner`), for the scripts
    that export without a runner: the flag is named and the exit code is 2.

    Raises:
        UsageError: "--export_dir: ..." with `serving.check_export_dir`'s reason.
    """
    from bert_tf import serving  # only the exporting scripts pay for its import
    try:
        serving.check_export_dir(export_dir)
    except OSError as error:  # FileExistsError too
        raise UsageError(f"--export_dir: {error}") from None


def resolve_path_flags(script):
    """Expands a leading `~` in the path flags of `script` (a module); refuses names not UTF-8.

    A shell expands `~` only at the start of a word, not after
    `--output_dir=`: the run made a folder named `~` in the current one and
    wrote there. Each comma-separated path of a flag (`--input_file=a,~/b`)
    is expanded as the shell would have. TensorFlow cannot open a name
    that is not UTF-8 (a Latin-1 file name): it failed at the first
    write, with "'utf-8' codec can't encode character '\\udce9'", naming
    no flag and no file.

    Raises:
        UsageError: "--FLAG=PATH: ..." for a name that is not UTF-8.
    """
    for module in (script.__name__, *SHARED_FLAG_MODULES):
        for flag in FLAGS.get_flags_for_module(module):
            value = flag.value
            if not (flag.name.endswith(PATH_FLAG_ENDINGS) and isinstance(value, str)):
                continue
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(value).decode("utf-8", "backslashreplace")
                raise UsageError(f"--{flag.name}={shown}: not a UTF-8 name, which TensorFlow "
                                 "cannot open; use a UTF-8 one") from None
            expanded = ",".join(os.path.expanduser(path.strip()) if path.strip().startswith("~")
                                else path for path in value.split(","))
            if expanded != value:
                setattr(FLAGS, flag.name, expanded)


def _asks_for_help(argv):
    """Whether command line `argv` asks for help; arguments after `--` are not flags."""
    flag_args = argv[1:argv.index("--")] if "--" in argv else argv[1:]
    return any(arg in HELP_ARGS for arg in flag_args)


def _script_help(script):
    """The help of a script: its module's docstring, then its own flags.

    Its own flags are those `script` (a module) defines and those it defined
    through `SHARED_FLAG_MODULES`, with their help and defaults; absl's and
    TensorFlow's internal flags are left to `--helpfull`.
    """
    flag_help = "".join(FLAGS.module_help(module) for module in (script, *SHARED_FLAG_MODULES))
    return (f"{script.__doc__.strip()}\n\nflags:\n{flag_help}\n\n"
            "--helpfull lists absl's and TensorFlow's flags too.")


def _parse_error_line(error):
    """absl's flag parsing error on one line: the required flags not given named together.

    >>> _parse_error_line(flags.IllegalFlagValueError(
    ...     "flag --a=None: Flag --a must have a value other than None.\\n"
    ...     "flag --b=None: Flag --b must have a value other than None."))
    'required flags not given: --a, --b'
    >>> _parse_error_line(flags.Error("one\\ntwo"))
    'one; two'
    """
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    missing = [match.group(1) for match in map(_MISSING_REQUIRED_FLAG.match, lines) if match]
    if missing and len(missing) == len(lines):
        return f"required flags not given: {', '.join('--' + name for name in missing)}"
    return "; ".join(lines)


# absl's line for a required flag left out (`flags.mark_flags_as_required`).
_MISSING_REQUIRED_FLAG = re.compile(r"flag --(\w+)=None: Flag --\1 must have a value other "
                                    r"than None\.$")


def _parse_flags(program):
    def parse(argv):
        try:
            return FLAGS(argv)
        except flags.Error as error:
            sys.stderr.write(f"{program}: error: {_parse_error_line(error)} (--help lists the "
                             "script's flags)\n")
            sys.exit(USAGE_EXIT_CODE)
    return parse


def run_main(run, program, required=()):
    """Parses the flags and calls `run()` under the error policy (never returns).

    A help request (`HELP_ARGS`) instead prints `_script_help` of the module of
    `run` and exits 0, whatever else the command line holds.

    Args:
        run: the script's work, a function of no arguments reading `FLAGS`.
        program: the name in error messages, e.g. "run_classifier".
        required: flags that must be given.
    """
    flags.mark_flags_as_required(list(required))

    def main(argv):
        if len(argv) > 1:
            _fail(program, UsageError(f"unexpected arguments: {' '.join(argv[1:])}"),
                  USAGE_EXIT_CODE)
        on_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _terminate) if on_main_thread else None
        try:
            resolve_path_flags(sys.modules[run.__module__])
            run()
        except StdoutClosed:
            end_with_stdout_closed()
        except (UsageError, app.UsageError) as error:
            _fail(program, error, USAGE_EXIT_CODE)
        except EXPECTED_ERRORS as error:
            # A stop on SIGTERM/SIGINT exits 128 + the signal, as the shell reports it.
            _fail(program, error, getattr(error, "exit_code", ERROR_EXIT_CODE))
        except _Terminated as interrupt:
            interrupt.message = "terminated by SIGTERM"
            _fail(program, interrupt, 128 + signal.SIGTERM)
        except KeyboardInterrupt as interrupt:
            interrupt.message = "interrupted by SIGINT (Ctrl-C)"
            _fail(program, interrupt, 128 + signal.SIGINT)
        finally:  # a script run in process (the tests) leaves the caller's handler
            if on_main_thread:
                signal.signal(signal.SIGTERM, previous)

    if _asks_for_help(sys.argv):
        # Before absl parses: its help flags would show the wrong docstring and exit 1.
        try:
            print_output(_script_help(sys.modules[run.__module__]))
        except StdoutClosed:
            end_with_stdout_closed()
        sys.exit(0)
    app.run(main, flags_parser=_parse_flags(program))
