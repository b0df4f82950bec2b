"""The runnable examples in the serving modules' docstrings."""

import doctest
import importlib

import pytest

MODULES = ["encoder_export", "masked_lm_export", "classifier_export", "export"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"bert_tf.serving.{name}")
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
