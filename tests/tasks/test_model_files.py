"""`resolve_model_files`: the casing flag checked against the vocabulary it reads with."""

import pytest

from bert_tf.errors import UsageError
from bert_tf.tasks.model_files import resolve_model_files
from tests_shared import write_tiny_bert_config


def test_an_uncased_vocabulary_read_unlowered_is_refused_and_the_reverse_warned(
        tmp_path, uncased_vocab_file, caplog):
    config = write_tiny_bert_config(tmp_path / "bert_config.json")
    resolve_model_files(config, uncased_vocab_file, do_lower_case=True)
    with pytest.raises(UsageError, match=rf"^--do_lower_case=False, but --vocab_file="
                                         rf"{uncased_vocab_file} has no capital letters"):
        resolve_model_files(config, uncased_vocab_file, do_lower_case=False)
    cased = tmp_path / "cased_vocab.txt"
    tokens = open(uncased_vocab_file, encoding="utf-8").read().splitlines()
    cased.write_text("\n".join("John" if token == "john" else token for token in tokens) + "\n")
    resolve_model_files(config, str(cased), do_lower_case=False)
    assert "cased model's vocabulary" not in caplog.text
    with caplog.at_level("WARNING"):
        resolve_model_files(config, str(cased), do_lower_case=True)
    assert f"--vocab_file={cased} holds capitalised tokens (a cased model's" in caplog.text
    chinese = tmp_path / "chinese_vocab.txt"  # no letter has a case: either flag reads it
    chinese.write_text("[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n\u4e2d\n##\u56fd\n")
    for do_lower_case in (True, False):
        resolve_model_files(config, str(chinese), do_lower_case=do_lower_case)


def test_a_left_to_right_checkpoint_stays_one_under_a_config_file_without_the_mark(
        tmp_path, uncased_vocab_file):
    """Its weights were built attending both ways, without a word, where
    --bert_config_file lacked the "causal" key."""
    import json

    from bert_tf.config_uses import is_causal
    config = write_tiny_bert_config(tmp_path / "bert_config.json")
    release = tmp_path / "left_to_right"
    release.mkdir()
    (release / "bert_config.json").write_text(json.dumps(
        dict(json.loads(open(config).read()), causal=True)))
    (release / "bert_model.ckpt.index").write_bytes(b"")
    files = resolve_model_files(config, uncased_vocab_file, str(release))
    assert is_causal(files.config)
    assert not is_causal(resolve_model_files(config, uncased_vocab_file).config)
