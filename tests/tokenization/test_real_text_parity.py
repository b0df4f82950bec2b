"""Both tokenizers against HuggingFace's slow BertTokenizer on a sample of every
real text source in ../shared/data (bench/tokenizer_parity.py runs them all)."""

import pytest

from tokenization_corpora import all_sources, text_lines
from tokenization_support import graph_ids, hf_deviates, hf_pieces

# About 8,000 texts uncased (2,000 cased), a 40th (200th) of every source.
SOURCES = all_sources(every=40)
SOURCES["sample_text"] = text_lines("sample_text.txt")
CASED_SOURCES = {name: texts[::5] for name, texts in SOURCES.items()}


def _reference_ids(tokenizer, texts):
    return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)) for t in texts]


@pytest.mark.parametrize("source", SOURCES)
def test_uncased_sample(source, reference, layer, hf_slow):
    texts = SOURCES[source]
    expected = _reference_ids(reference, texts)
    assert graph_ids(layer, texts) == expected
    comparable = [(t, ids) for t, ids in zip(texts, expected) if not hf_deviates(t)]
    assert [ids for _, ids in comparable] == [
        reference.convert_tokens_to_ids(hf_pieces(hf_slow, t)) for t, _ in comparable]


@pytest.mark.parametrize("source", CASED_SOURCES)
def test_cased_sample(source, cased_reference, cased_layer, hf_slow_cased):
    texts = CASED_SOURCES[source]
    expected = _reference_ids(cased_reference, texts)
    assert graph_ids(cased_layer, texts) == expected
    comparable = [(t, ids) for t, ids in zip(texts, expected) if not hf_deviates(t)]
    assert [ids for _, ids in comparable] == [
        cased_reference.convert_tokens_to_ids(hf_pieces(hf_slow_cased, t))
        for t, _ in comparable]
