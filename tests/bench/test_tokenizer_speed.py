"""bench/tokenizer_speed.py: the id check that its speed table is printed with.

Nothing here is timed; the tokenizers run once on real SQuAD contexts and
questions so that every peer's output format is read the way the bench
reads it.
"""

import pytest

from tests_shared import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("tokenizer_speed")


def test_every_tokenizer_is_held_to_the_reference_ids(bench):
    lines = bench.tokenization_corpora.squad_texts("dev-v1.1")[:40]
    tokenizers = bench.candidates()
    outputs = {name: tokenize(lines) for name, (tokenize, _) in tokenizers.items()}
    to_ids = {name: convert for name, (_, convert) in tokenizers.items()}
    reference = to_ids[bench.REFERENCE](outputs[bench.REFERENCE])
    assert len(reference) == 40 and all(reference)
    report = bench.agreement(outputs, to_ids)
    assert "bert_tf BertTokenizerLayer 40/40" in report
    assert "HF transformers BertTokenizer 40/40" in report
    # A tokenizer whose ids differ on a line is counted short of the total.
    to_ids["HF transformers BertTokenizer (slow)"] = lambda output: [[0]] + output[1:]
    assert "HF transformers BertTokenizer 39/40" in bench.agreement(outputs, to_ids)
