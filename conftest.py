"""Imports every `bert_tf` module first, and starts each test from one random state.

Imports. With `--import-mode=importlib`, pytest imports a module it collects by
running its file, even when importing the module's package has just
imported it (`bert_tf/modeling/__init__.py` imports its submodules). The
module's classes then exist twice, and `isinstance` fails between the two
copies: `pytest bert_tf/modeling/masked_lm_head.py tests/training` broke a
checkpoint-name test that way. pytest reuses a module already in
`sys.modules`, so importing them all first makes the suite independent of
the order its paths are given in. `bert_tf.scripts` is left out, package
and all, as pytest.ini leaves it out of collection: a script defines its
flags when imported, and the package's own import sets TensorFlow's log
level for the whole process.

Random state. pytest-xdist decides per run which tests share a worker and
in what order, so a test's unseeded weights and data would depend on the
tests before it. A bound that holds for most initialisations then fails
now and then: CI once failed that way on a bfloat16 comparison. Every test
and docstring example therefore starts from the same seed.
"""

import importlib
import pkgutil

import keras
import pytest

import bert_tf


def _import_all(package):
    """Imports every module below `package` but `bert_tf.scripts`."""
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        if info.name != "bert_tf.scripts":
            module = importlib.import_module(info.name)
            if info.ispkg:
                _import_all(module)


_import_all(bert_tf)


@pytest.fixture(autouse=True)
def same_random_state_for_every_test():
    """Seeds Python's, NumPy's, TensorFlow's and Keras' generators before each test."""
    keras.utils.set_random_seed(0)
