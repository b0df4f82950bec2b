"""The compiled line tokenizer gives the reference tokenizer's ids on real text."""

import itertools

import pytest

from bert_tf.data.documents import read_lines
from bert_tf.data.line_tokenizer import LineTokenizer
from bert_tf.tokenization.full_tokenizer import FullTokenizer
from tests_shared import shared_path

ODD_LINES = ["", "   ", "UNwant\u00e9d,running", " \tHeLLo!how  \n Are yoU?  ",
             "ah\u535a\u63a8zz", "na\u00efve caf\u00e9 \u00c5ngstr\u00f6m", "\x00nul\x07bell",
             "[MASK] and [SEP] in the text", "x" * 250, "emoji \U0001F600 end"]


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_same_ids_as_full_tokenizer(do_lower_case, uncased_vocab_file):
    lines = list(itertools.islice(read_lines(str(shared_path("corpus",
                                                             "gutenberg_pretrain.txt"))), 3000))
    lines += ODD_LINES
    reference = FullTokenizer(uncased_vocab_file, do_lower_case=do_lower_case)
    expected = [reference.convert_tokens_to_ids(reference.tokenize(line)) for line in lines]
    tokenize = LineTokenizer(uncased_vocab_file, do_lower_case)
    assert tokenize(lines) == expected
    assert tokenize([]) == []
