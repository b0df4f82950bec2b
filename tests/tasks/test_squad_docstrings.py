"""The runnable examples in the SQuAD modules' docstrings."""

import doctest
import importlib

import pytest

MODULES = ["bert_tf.tasks.squad_data", "bert_tf.tasks.squad_features",
           "bert_tf.tasks.squad_postprocessing", "bert_tf.tasks.squad_scoring",
           "bert_tf.tasks.squad", "bert_tf.evaluate_squad"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
