"""Vocabulary learning on real corpus text, checked with the original layout
and with tokenizers we did not write (HuggingFace) besides our reference one."""

import os

import pytest
import tensorflow as tf
import transformers

from tests_shared import corpus_head, run_script, shared_path
from bert_tf.data import vocab_learning
from bert_tf.errors import UsageError
from bert_tf.tokenization.full_tokenizer import FullTokenizer
from bert_tf.tokenization.vocab import load_vocab

SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(scope="module")
def corpus_lines():
    return shared_path("corpus", "gutenberg_pretrain.txt").read_text().splitlines()


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """A 1000-entry vocabulary learned from the corpus' first 1000 lines."""
    folder = tmp_path_factory.mktemp("vocab")
    train = corpus_head(folder)
    vocab = vocab_learning.learn_wordpiece_vocab(str(train), 1000, min_count=2)
    path = folder / "vocab.txt"
    vocab_learning.write_vocab(vocab, str(path))
    return vocab, str(path), str(train)


def test_layout_like_the_original(learned):
    vocab, path, _ = learned
    assert vocab[0] == "[PAD]"
    assert vocab[1:100] == [f"[unused{i}]" for i in range(99)]
    assert vocab[100:104] == SPECIALS
    assert 950 <= len(vocab) <= 1000  # within the learner's 5% slack
    assert len(set(vocab)) == len(vocab)
    assert list(load_vocab(path)) == vocab  # the file reads back, id = line
    learned_part = vocab[104:]
    assert "the" in learned_part and any(t.startswith("##") and len(t) > 3
                                         for t in learned_part)
    assert not any(t.lower() != t for t in learned_part)  # uncased


def test_reserved_block_equals_the_released_vocab(uncased_vocab_file):
    released = open(uncased_vocab_file, encoding="utf-8").read().splitlines()
    assert vocab_learning.reserved_tokens(994) == released[:999]
    small = vocab_learning.reserved_tokens(5)
    assert small == ["[PAD]"] + [f"[unused{i}]" for i in range(5)] + SPECIALS


def test_every_corpus_character_is_a_piece(learned):
    vocab, _, train = learned
    tokens = set(vocab)
    basic = transformers.BasicTokenizer(do_lower_case=True)
    chars = {c for line in open(train, encoding="utf-8") for w in basic.tokenize(line)
             for c in w}
    assert chars and all(c in tokens and "##" + c in tokens for c in chars)


def test_held_out_text_has_few_unknowns(learned, corpus_lines):
    """Our reference tokenizer and HuggingFace's agree and rarely need [UNK]."""
    _, path, _ = learned
    held_out = corpus_lines[1000:2000]
    ours = FullTokenizer(path, do_lower_case=True)
    theirs = transformers.BertTokenizer(vocab_file=path, do_lower_case=True)
    ids = [ours.convert_tokens_to_ids(ours.tokenize(line)) for line in held_out]
    assert ids == [theirs.convert_tokens_to_ids(theirs.tokenize(line)) for line in held_out]
    pieces = sum(len(line_ids) for line_ids in ids)
    unknown = sum(line_ids.count(100) for line_ids in ids)
    words = sum(len(ours.basic_tokenizer.tokenize(line)) for line in held_out)
    assert unknown / pieces < 0.001
    assert pieces / words < 1.6  # real word pieces, not letters


def test_cased_vocabulary_keeps_capitals():
    vocab = vocab_learning.learn_wordpiece_vocab(
        str(shared_path("corpus", "sample_text.txt")), 400, lower_case=False,
        num_unused=0, min_count=2)
    assert vocab[:5] == ["[PAD]"] + SPECIALS
    assert "The" in vocab and "the" in vocab


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="no-such-corpus"):
        vocab_learning.learn_wordpiece_vocab(str(tmp_path / "no-such-corpus*.txt"), 1000)
    with pytest.raises(ValueError, match="vocab_size=104"):
        vocab_learning.learn_wordpiece_vocab(
            str(shared_path("corpus", "sample_text.txt")), 104)


def test_a_vocab_size_below_the_alphabet_is_refused_not_exceeded(tmp_path):
    """The reserved entries and the characters stay, so 110 cannot hold them: it wrote 182
    entries under a warning, and a bert_config.json of vocab_size=110 then met larger ids."""
    corpus = corpus_head(tmp_path, lines=100)
    with pytest.raises(UsageError) as error:
        vocab_learning.learn_wordpiece_vocab(str(corpus), 110, min_count=1)
    needed = int(str(error.value).split(" take ")[1].split(";")[0])
    assert str(error.value) == (
        f"vocab_size=110 is too small for this corpus: the 104 reserved entries, its "
        f"characters and their ## forms take {needed}; give at least that, or a lower "
        "max_unique_chars")
    assert len(vocab_learning.learn_wordpiece_vocab(str(corpus), needed, min_count=1)) == needed


def test_script_writes_a_vocab_file(tmp_path):
    out = tmp_path / "new_folder" / "vocab.txt"  # made, as create_pretraining_data does
    result = run_script("learn_vocab.py",
                        f"--input_file={shared_path('corpus', 'sample_text.txt')}",
                        f"--output_file={out}", "--vocab_size=400", "--min_count=2",
                        "--num_unused=10")
    assert result.returncode == 0, result.stderr[-2000:]
    vocab = list(load_vocab(str(out)))
    assert vocab[:15] == ["[PAD]"] + [f"[unused{i}]" for i in range(10)] + SPECIALS
    assert 250 < len(vocab) <= 400  # 33 lines hold fewer pieces than asked


def test_script_expands_a_tilde_and_refuses_a_name_that_is_not_utf8(tmp_path, monkeypatch):
    """A shell leaves `~` after `--output_file=` as it is: the run wrote to a folder named
    `~` in the current one. TensorFlow cannot open a Latin-1 name, and failed with a
    UnicodeEncodeError naming neither flag nor file."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    (tmp_path / "corpus.txt").write_bytes(shared_path("corpus", "sample_text.txt").read_bytes())
    result = run_script("learn_vocab.py", "--input_file=~/corpus.txt",
                        "--output_file=~/out/vocab.txt", "--vocab_size=400", "--min_count=2")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "out" / "vocab.txt").exists()
    assert os.listdir(tmp_path / "cwd") == []
    latin1 = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9.txt")
    result = run_script("learn_vocab.py", "--input_file=~/corpus.txt", f"--output_file={latin1}")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"learn_vocab: error: --output_file={tmp_path}/caf\\xe9.txt: not a UTF-8 name, which "
        "TensorFlow cannot open; use a UTF-8 one")


def test_script_names_a_missing_input(tmp_path):
    result = run_script("learn_vocab.py", f"--input_file={tmp_path}/missing-corpus.txt",
                        f"--output_file={tmp_path}/vocab.txt")
    assert result.returncode != 0
    assert "--input_file: input pattern" in result.stderr
    assert "missing-corpus.txt" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "vocab.txt").exists()


def test_script_never_writes_over_its_corpus(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(shared_path("corpus", "sample_text.txt").read_bytes())
    result = run_script("learn_vocab.py", f"--input_file={tmp_path}/*.txt",
                        f"--output_file={corpus}", "--vocab_size=400")
    assert result.returncode == 2
    assert (f"learn_vocab: error: output_file {corpus} is the input_file {corpus}: refusing "
            "to write over a file the run reads") in result.stderr
    assert corpus.read_bytes() == shared_path("corpus", "sample_text.txt").read_bytes()


def test_a_binary_file_is_refused(tmp_path):
    records = tmp_path / "corpus.tfrecord"
    with tf.io.TFRecordWriter(str(records)) as writer:
        writer.write(b"some text")
    with pytest.raises(ValueError, match="corpus.tfrecord: not a text file"):
        vocab_learning.count_words(str(records))


def test_bad_corpus_files_are_data_errors_not_usage_errors(tmp_path):
    """Exit 1 naming the files (not a Python list); only flags exit 2."""
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n\n")
    other = tmp_path / "other.txt"
    other.write_text("\n")
    with pytest.raises(ValueError, match=f"^{blank}, {other}: no words to learn from"):
        vocab_learning.learn_wordpiece_vocab([str(blank), str(other)], 1000)
    many = [str(blank)] * 2 + [str(other)] * 3  # a glob of thousands: the first three named
    with pytest.raises(ValueError, match=f"^{blank}, {blank}, {other} and 2 more: no words"):
        vocab_learning.count_words(many)
    result = run_script("learn_vocab.py", f"--input_file={blank}",
                        f"--output_file={tmp_path}/vocab.txt")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (f"learn_vocab: error: {blank}: no words to "
                                              "learn from (the text is blank)")
    binary = tmp_path / "corpus.bin"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    result = run_script("learn_vocab.py", f"--input_file={binary}",
                        f"--output_file={tmp_path}/vocab.txt")
    assert result.returncode == 1
    assert f"learn_vocab: error: {binary}: not a text file" in result.stderr
    corpus = shared_path("corpus", "sample_text.txt")
    result = run_script("learn_vocab.py", f"--input_file={corpus}",
                        f"--output_file={tmp_path}/vocab.txt", "--vocab_size=104")
    assert result.returncode == 2
    assert "learn_vocab: error: vocab_size=104 leaves no room" in result.stderr
    assert not (tmp_path / "vocab.txt").exists()


def test_counting_reports_the_megabytes_it_read(tmp_path, caplog):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Grüße aus Köln.\nZürich 東京\n" * 40000, encoding="utf-8")
    with caplog.at_level("INFO"):
        counts = vocab_learning.count_words(str(corpus))
    assert counts["koln"] == counts["東"] == 40000  # accents stripped, CJK split
    closing = [r.getMessage() for r in caplog.records
               if r.getMessage().startswith("counting words: ")]
    megabytes = corpus.stat().st_size / 1e6  # bytes, not characters: 1.32, not 1.08
    assert len(closing) == 1 and closing[0].startswith(f"counting words: {megabytes:.3g} MB in ")


def test_bytes_that_are_not_utf8_past_the_first_kilobytes_are_named(tmp_path, caplog):
    """The tokenizer drops them ("caf\\xe9" counts as "caf"): said, naming the first line."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"plain text here\n" * 1000 + b"caf\xe9 ol\xe9\nplain\nna\xefve\n")
    with caplog.at_level("WARNING"):
        counts = vocab_learning.count_words(str(corpus))
    assert counts["caf"] == 1 and "cafe" not in counts
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        f"{corpus}:1001: not UTF-8 ('utf-8' codec can't decode byte 0xe9 in position 3: "
        "invalid continuation byte); save the file as UTF-8; 2 lines in all hold bytes that "
        "are not UTF-8, left out of the words learned"]

