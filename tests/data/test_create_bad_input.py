"""Bad input to the pretraining-data tool: clear errors, or a warning and go on."""

import logging
import os
import random

import pytest
import tensorflow as tf

from bert_tf.data.documents import read_lines
from bert_tf.data.input_files import check_text_file, expand_input_patterns
from bert_tf.output_paths import check_outputs_apart
from bert_tf.data.pretraining_data import create_exact
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.data.sharded_pretraining_data import create_sharded
from bert_tf.data.tfrecord_writer import RoundRobinRecordWriter
from bert_tf.errors import UsageError
from bert_tf.tokenization.vocab import VocabError
from tests_shared import file_size_limit, shared_path

OPTIONS = PretrainingDataOptions(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2)


def _write(path, data):
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def _count(path):
    return sum(1 for _ in tf.data.TFRecordDataset(str(path)))


def test_missing_input_names_the_pattern(tmp_path):
    with pytest.raises(ValueError, match="nothing-here-"):
        expand_input_patterns(f"{shared_path('corpus', 'sample_text.txt')},{tmp_path}/nothing-here-*")


def test_input_files_come_in_the_original_order(tmp_path):
    # The comma list's order, each glob expanded as tf.io.gfile.glob lists it.
    for name in ("b1.txt", "b0.txt", "b2.txt", "a.txt"):
        _write(tmp_path / name, "x\n")
    assert expand_input_patterns(f"{tmp_path}/b*.txt, {tmp_path}/a.txt") == [
        *tf.io.gfile.glob(f"{tmp_path}/b*.txt"), f"{tmp_path}/a.txt"]


@pytest.mark.parametrize("text", ["", "\n\n \n\t\n", "\x07\x01\n\u200b\n"])
def test_input_without_text_is_an_error_and_leaves_no_output(text, tmp_path, uncased_vocab_file):
    source = _write(tmp_path / "empty.txt", text)
    output = tmp_path / "out.tfrecord"
    with pytest.raises(ValueError, match="no text in input files .*empty.txt"):
        create_exact([source], [str(output)], uncased_vocab_file, OPTIONS)
    assert os.listdir(tmp_path) == ["empty.txt"]


def test_undecodable_bytes_are_reported_by_line_and_dropped(tmp_path, caplog):
    source = _write(tmp_path / "bad.txt", b"first line\nsec\xffond \xfe line\n\nthird\n")
    check_text_file(source)  # a few stray bytes: still text, read with warnings
    with caplog.at_level(logging.WARNING):
        lines = list(read_lines(source))
    assert lines == ["first line", "second  line", "", "third"]
    assert f"{source}:2: undecodable UTF-8" in caplog.text


def test_awkward_documents_still_make_instances(tmp_path, uncased_vocab_file):
    long_sentence = " ".join(["unbelievably"] * 400)
    text = "\n".join([
        "\n\n\n",                                   # empty documents
        "A lonely one-sentence document.", "",
        "\x07\x08", "",                             # a document that tokenizes to nothing
        long_sentence, "",                          # one sentence longer than max_seq_length
        "The first of two sentences.", "And the second one of them.",
        "\r\n  \t",                                 # a whitespace-only line ends a document
        "Windows line endings work too.\r", "Yes they do.\r\n",
    ])
    source = _write(tmp_path / "awkward.txt", text)
    output = tmp_path / "out.tfrecord"
    summary = create_exact([source], [str(output)], uncased_vocab_file, OPTIONS)
    assert summary.num_documents == 4
    assert summary.num_instances == _count(output) > 0
    for raw in tf.data.TFRecordDataset(str(output)):
        example = tf.train.Example.FromString(raw.numpy())
        assert sum(example.features.feature["input_mask"].int64_list.value) <= 64


def test_vocab_without_special_tokens_names_the_file(tmp_path):
    vocab = _write(tmp_path / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    source = _write(tmp_path / "in.txt", "hello hello\nhello\n")
    with pytest.raises(VocabError, match=r"vocab.txt.*\[MASK\]"):
        create_exact([source], [str(tmp_path / "out.tfrecord")], vocab, OPTIONS)


def test_unwritable_output_fails_before_reading(tmp_path, uncased_vocab_file):
    blocker = _write(tmp_path / "a_file", "not a directory")
    source = _write(tmp_path / "in.txt", "Some text.\n")
    with pytest.raises(OSError, match="cannot write .*a_file/out.tfrecord: a file stands where"):
        create_exact([source], [f"{blocker}/out.tfrecord"], uncased_vocab_file, OPTIONS)


def test_an_output_file_named_twice_is_refused(tmp_path):
    with pytest.raises(ValueError, match="named twice"):
        RoundRobinRecordWriter([str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "a")])


def test_what_a_killed_writer_left_is_removed_by_the_next(tmp_path):
    left = tmp_path / "a.tfrecord.tmp-999999999"  # no such process
    left.write_bytes(b"half a shard")
    with RoundRobinRecordWriter([str(tmp_path / "a.tfrecord")]) as writer:
        writer.write_all([b"one"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tfrecord"]


@pytest.mark.parametrize("record_bytes", [100_000, 10])  # the disk fills in a write, in close
def test_a_full_disk_names_the_output_file_and_leaves_no_temporary_file(tmp_path, record_bytes):
    outputs = [str(tmp_path / f"part{i}.tfrecord") for i in range(2)]
    with file_size_limit(32), pytest.raises(  # each file gets 2 records of 16 + record_bytes
            OSError, match=rf"^cannot write {tmp_path}/part[01].tfrecord: File too large$"):
        with RoundRobinRecordWriter(outputs) as writer:
            writer.write_all([b"x" * record_bytes] * 4)
    assert os.listdir(tmp_path) == []


def test_shards_are_replaced_all_or_none(tmp_path):
    """The second shard cannot take its name (a folder is there): the first is not replaced
    either, so a glob never reads new shards beside an earlier run's."""
    outputs = [str(tmp_path / f"part{i}.tfrecord") for i in range(2)]
    with RoundRobinRecordWriter(outputs[:1]) as writer:
        writer.write_all([b"earlier"])
    os.mkdir(outputs[1])
    with pytest.raises(OSError, match=rf"^cannot write {outputs[1]}: Is a directory$"):
        with RoundRobinRecordWriter(outputs) as writer:
            writer.write_all([b"new"] * 4)
    assert sorted(os.listdir(tmp_path)) == ["part0.tfrecord", "part1.tfrecord"]
    assert _count(outputs[0]) == 1


def test_one_output_file_spelled_two_ways_is_refused(tmp_path, monkeypatch):
    """Two writers on one file made a corrupt TFRecord under the final name."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"output_file names one file twice \(a.tfrecord, "
                                         r"./a.tfrecord\)"):
        check_outputs_apart(["a.tfrecord", "./a.tfrecord"], {})
    with pytest.raises(ValueError, match="named twice"):
        RoundRobinRecordWriter(["a.tfrecord", "./a.tfrecord"])
    assert os.listdir(tmp_path) == []


def test_files_appear_only_when_complete(tmp_path):
    outputs = [str(tmp_path / "sub" / f"part{i}.tfrecord") for i in range(2)]
    with pytest.raises(RuntimeError):
        with RoundRobinRecordWriter(outputs) as writer:
            writer.write_all([b"a", b"b", b"c"])
            assert sorted(os.listdir(tmp_path / "sub")) == [
                f"part{i}.tfrecord.tmp-{os.getpid()}" for i in range(2)]
            raise RuntimeError("interrupted")
    assert os.listdir(tmp_path / "sub") == []
    with RoundRobinRecordWriter(outputs) as writer:
        writer.write_all([b"a", b"b", b"c"])
    assert sorted(os.listdir(tmp_path / "sub")) == ["part0.tfrecord", "part1.tfrecord"]
    assert [_count(p) for p in outputs] == [2, 1]


def test_exact_mode_continues_a_document_across_files_like_the_original(tmp_path,
                                                                        uncased_vocab_file):
    # The original starts documents only at blank lines, not at file starts.
    first = _write(tmp_path / "a.txt", "One sentence here.\nAnother one here.\n")
    second = _write(tmp_path / "b.txt", "The same document goes on.\n\nA new document.\n")
    summary = create_exact([first, second], [str(tmp_path / "out.tfrecord")],
                           uncased_vocab_file, OPTIONS)
    assert (summary.num_documents, summary.num_sentences) == (2, 4)


def _snapshot(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


@pytest.mark.parametrize("flag", ["input_file", "vocab_file"])
def test_output_over_an_input_is_refused_before_writing(flag, tmp_path, uncased_vocab_file):
    vocab = _write(tmp_path / "vocab.txt", open(uncased_vocab_file, encoding="utf-8").read())
    source = _write(tmp_path / "in.txt", "A sentence.\nAnother one.\n")
    os.symlink(tmp_path / "in.txt", tmp_path / "link.txt")  # another name, the same file
    target = {"input_file": str(tmp_path / "link.txt"), "vocab_file": vocab}[flag]
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match=f"output_file .*is the {flag} .*refusing to write"):
        create_exact([source], [str(tmp_path / "other.tfrecord"), target], vocab, OPTIONS)
    assert _snapshot(tmp_path) == before


def test_a_glob_over_earlier_output_is_refused(tmp_path, uncased_vocab_file):
    # The tool's own records from a run before, matched again by "corpus/*".
    _write(tmp_path / "part.txt", "A sentence.\nAnother one.\n")
    _write(tmp_path / "records.tfrecord",
           shared_path("golden", "sample_text_seed12345_dupe10.tfrecord").read_bytes())
    inputs = expand_input_patterns(f"{tmp_path}/*")
    with pytest.raises(ValueError, match=r"records.tfrecord: not a text file \(a NUL byte"):
        create_exact(inputs, [str(tmp_path / "out" / "new.tfrecord")], uncased_vocab_file,
                     OPTIONS)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("create", [create_exact, create_sharded])
def test_random_bytes_are_not_text(create, tmp_path, uncased_vocab_file):
    rng = random.Random(0)
    no_nul = bytes(rng.randrange(1, 256) for _ in range(20_000))  # undecodable, but no NUL
    source = _write(tmp_path / "noise.bin", no_nul)
    with pytest.raises(ValueError, match=r"noise.bin: not UTF-8 text \(\d+ of its first 8192"):
        create([source], [str(tmp_path / "out.tfrecord")], uncased_vocab_file, OPTIONS)
    assert os.listdir(tmp_path) == ["noise.bin"]


def test_a_line_too_long_for_one_example_is_named(tmp_path, uncased_vocab_file, caplog):
    # A whole book on one line: one example keeps 61 of its tokens, the rest is lost.
    book = " ".join(f"word{i % 50} and more." for i in range(20_000))
    source = _write(tmp_path / "book.txt", f"A title.\n\nA first line.\n{book}\nThe end.\n")
    with caplog.at_level(logging.WARNING):
        create_exact([source], [str(tmp_path / "out.tfrecord")], uncased_vocab_file, OPTIONS)
    assert f"{source}:4: a sentence of 100000 tokens, more than max_seq_length - 3 = 61" \
        in caplog.text
    assert caplog.text.count("more than max_seq_length") == 1
