"""Where the benchmarks find the real data: `../shared/data` beside the repository.

`BERT_TF_SHARED_DATA` points elsewhere, as it does for the tests.

A bench whose data was not there (a machine without the folder, a wrong
flag) stopped in a traceback after seconds of set-up, or minutes on a GPU.
So each bench checks its data before any work, and a missing file or folder
stops it with one line naming it and where the real data is expected: a
path flag as its flags are parsed (`define_path_flag`, or `path_argument`
for the argparse benches), a fixed path first thing in `main` (`require`).
"""

import argparse
import glob
import os
import pathlib
import sys

SHARED_DATA = pathlib.Path(os.environ.get(
    "BERT_TF_SHARED_DATA", pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"))
# Pretraining records written by the original tool (118 instances of sample_text.txt).
GOLDEN_RECORDS = SHARED_DATA / "golden" / "sample_text_seed12345_dupe10.tfrecord"

EXPECTED = (f"the benches' real data is expected in {SHARED_DATA} "
            "(set BERT_TF_SHARED_DATA to the folder that holds it)")


def _found(path):
    """Whether `path` (a file, a folder or a file pattern) names something that exists."""
    return bool(glob.glob(str(path)))


def define_path_flag(name, default, help_text):
    """Defines `--name`, a file or folder of data that must exist when the flags are parsed."""
    from absl import flags  # here: pretraining_data_profile.py times its start without it

    flags.DEFINE_string(name, str(default), help_text)
    flags.register_validator(name, _found, f"not found; {EXPECTED}")


def path_argument(value):
    """An argparse `type`: `value` if it exists, else the error argparse reports for the option."""
    if not _found(value):
        raise argparse.ArgumentTypeError(f"{value} not found; {EXPECTED}")
    return value


def require(*paths):
    """Exits with one line naming the first of `paths` that does not exist, if one does not."""
    for path in paths:
        if not _found(path):
            sys.exit(f"{path} not found; {EXPECTED}")
