"""`vocab_is_lower_cased` on real released vocabularies and a cased one."""

from bert_tf.tokenization.vocab import vocab_is_lower_cased
from tests_shared import shared_path


def test_released_uncased_vocabularies():
    assert vocab_is_lower_cased(shared_path("vocab", "bert-base-uncased-vocab.txt"))
    assert vocab_is_lower_cased(shared_path("models", "all-MiniLM-L6-v2", "vocab.txt"))


def test_a_single_capitalised_token_makes_it_cased(tmp_path):
    lines = shared_path("vocab", "bert-base-uncased-vocab.txt").read_text().splitlines()
    cased = tmp_path / "vocab.txt"
    cased.write_text("\n".join(lines + ["##Ä"]) + "\n")
    assert not vocab_is_lower_cased(cased)
