"""The peer packages the benches compare against, and one line where one is not installed.

The peers (PyTorch, HuggingFace transformers and tokenizers, keras-hub, and
threadpoolctl for the CPU matmul peak) come with `make bench`, from
requirements-test.txt, not with bert_tf. A bench run by hand where one was
missing stopped in an ImportError traceback as it was imported, even when
its flags had left that peer out. So:

* a bench or helper imports a peer it always needs at the top, under
  `needed()`: a missing one stops it there with one line naming the
  package and how to get it (`tests/bench` checks every such import);
* a peer that a flag chooses (`--implementations=...,keras_hub`) is imported
  only in the code that runs it, and the flag names what each of its values
  needs (`check_flag`): a missing peer stops the bench as its flags are
  parsed, before any work, and a run that leaves the peer out runs without it.
"""

import contextlib
import importlib.util

from absl import flags

PEERS = ("torch", "transformers", "keras_hub", "tokenizers", "threadpoolctl")
# What torch and transformers are to a bench that compares against HuggingFace.
HUGGINGFACE = ("torch", "transformers")


def not_installed(package):
    """The line for a missing peer `package`: its name and how to get it."""
    return (f"needs {package}, which is not installed: `make bench` installs the benches' peers "
            "(pip install -r requirements-test.txt)")


@contextlib.contextmanager
def needed():
    """Around imports of peers: a missing one exits with `not_installed`'s line, not a traceback.

    Only a peer missing as a whole counts; any other import error is raised
    as it is.
    """
    try:
        yield
    except ModuleNotFoundError as error:
        if error.name not in PEERS:
            raise
        raise SystemExit(f"this bench {not_installed(error.name)}") from None


def check_flag(name, needs):
    """Stops the bench at flag parsing where a peer that `--name`'s value runs is not installed.

    `needs`: `{value: the peers it runs}`, for the flag's value or, for a
    list flag, each of its items; values not in it run no peer.
    """
    def check(value):
        for item in value if isinstance(value, list) else [value]:
            for package in needs.get(item, ()):
                if importlib.util.find_spec(package) is None:
                    raise flags.ValidationError(not_installed(package))
        return True

    flags.register_validator(name, check)
