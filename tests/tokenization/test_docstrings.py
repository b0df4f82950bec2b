"""The runnable examples in the tokenization modules' docstrings."""

import doctest
import importlib

import pytest

MODULES = ["char_classes", "basic_tokenizer", "wordpiece", "vocab", "special_tokens",
           "full_tokenizer", "unicode_tables", "graph_basic_tokenizer", "tokenizer_layer",
           "packer", "preprocessor"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"bert_tf.tokenization.{name}")
    result = doctest.testmod(module)
    assert result.failed == 0
