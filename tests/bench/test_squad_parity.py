"""bench/squad_parity.py on real subsets: our SQuAD windows and answers equal HF's port.

The first 300 questions of dev 1.1 and of dev 2.0 (159 of them unanswerable)
and the first 1000 training questions: every window's tokens, ids,
token_to_orig_map, token_is_max_context (and training labels) equal those of
`squad_convert_examples_to_features`; from the same logits, predictions,
n-best lists and null odds equal `compute_predictions_logits`'s, apart from
the departures the bench counts (HF's null-only placeholder, its joining of
pieces), which must show up where expected. The whole dev sets are run by the
bench itself (numbers in bench/README.md).
"""

import functools

import pytest

import squad_parity  # bench/, on the test path


@functools.lru_cache(maxsize=None)
def parity_of(name):
    """Ours and HF's windows of a set's first questions (built once per session)."""
    content, version_2 = squad_parity.squad_subset(name, 1000 if name.startswith("train") else 300)
    return squad_parity.Parity(content, version_2, is_training=name.startswith("train"))


@pytest.mark.parametrize("name", ["dev-v1.1", "dev-v2.0", "train-v1.1"])
def test_windows_equal_hf(name):
    parity = parity_of(name)
    counts = parity.compare_features()
    assert counts["questions"] == (1000 if name.startswith("train") else 300)
    assert counts["windows"] > counts["questions"]  # some contexts need several windows
    assert counts["matching_windows"] == counts["windows"]
    assert counts["hf_tokenizer"] == counts["unexplained"] == 0
    if parity.version_2:
        assert sum(e.is_impossible for e in parity.hf_examples) == 159
    if parity.is_training:
        labelled = [f for f in parity.features if f.start_position > 0]
        assert len(labelled) > 0.9 * counts["questions"]


@pytest.mark.parametrize("context_bonus", [2.0, 0.0])
@pytest.mark.parametrize("name", ["dev-v1.1", "dev-v2.0"])
def test_answers_equal_hf(name, context_bonus):
    parity = parity_of(name)
    parity.compare_features()
    counts = parity.compare_predictions(context_bonus=context_bonus)
    compared = counts["questions"] - counts["hf_null_only"]
    assert counts["questions"] == 300
    assert counts["matching_predictions"] == counts["matching_nbest"] == compared
    assert counts["matching_null_only"] == counts["hf_null_only"]
    if parity.version_2:
        assert counts["matching_null_odds"] == compared
        # Without the bonus, short contexts leave only the null answer for some questions.
        assert (counts["hf_null_only"] > 0) == (context_bonus == 0.0)
    # HF's own joining of pieces changes some answers (spans starting inside a word).
    assert counts["hf_convert_tokens_to_string"] > 0
