"""The CoNLL-2003 reader: real files, IOB1 -> BIO, -DOCSTART- placement, bad input."""

import pytest
from seqeval.metrics.sequence_labeling import get_entities

from bert_tf.tasks import conll_data
from bert_tf.tasks.entity_metrics import entities
from tests_shared import shared_path


def _raw_sentences(path):
    """The NER column of each sentence as written (IOB1), split independently of the reader."""
    sentences, current = [], []
    for line in path.read_text().splitlines() + [""]:
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(fields[3])
    return sentences


@pytest.mark.parametrize("name, sentences, words, entity_count", [
    ("eng.train", 14041, 203621, 23499),
    ("eng.testa", 3250, 51362, 5942),
    ("eng.testb", 3453, 46435, 5648),
])
def test_real_files_keep_every_sentence_and_entity(name, sentences, words, entity_count):
    path = shared_path("conll2003", name)
    read = conll_data.read_conll(path, "x")
    assert len(read) == sentences
    assert sum(len(s.words) for s in read) == words
    raw = _raw_sentences(path)
    assert [len(tags) for tags in raw] == [len(s.tags) for s in read]
    # seqeval reads the original IOB1 tags with conlleval's rules: the same entities.
    theirs = [[(kind, start, end + 1) for kind, start, end in get_entities(tags)]
              for tags in raw]
    ours = [[tuple(entity) for entity in entities(s.tags)] for s in read]
    assert ours == theirs
    assert sum(map(len, ours)) == entity_count
    # Converted tags are proper BIO: I-X only after B-X or I-X.
    for sentence in read:
        for previous, tag in zip(("O",) + sentence.tags, sentence.tags):
            assert not tag.startswith("I-") or previous[2:] == tag[2:], sentence.guid


def test_iob1_to_bio_by_hand():
    iob1 = ["I-PER", "I-PER", "B-PER", "I-PER", "O", "I-LOC", "I-ORG", "I-ORG", "B-ORG"]
    assert conll_data.iob1_to_bio(iob1) == [
        "B-PER", "I-PER", "B-PER", "I-PER", "O", "B-LOC", "B-ORG", "I-ORG", "B-ORG"]
    bio = ["B-MISC", "I-MISC", "O", "B-LOC", "B-LOC"]
    assert conll_data.iob1_to_bio(bio) == bio


def _write(tmp_path, text, name="eng.testa"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_docstart_anywhere(tmp_path):
    text = ("Rome NNP I-NP I-LOC\n\n-DOCSTART- -X- -X- O\n\n"
            "I PRP I-NP O\nsaw VBD I-VP O\nJohn NNP I-NP I-PER\n\n\n"
            "-DOCSTART- -X- O O\nMary NNP I-NP I-PER\nSmith NNP I-NP I-PER\n"
            "-DOCSTART- -X- O O")
    read = conll_data.read_conll(_write(tmp_path, text), "dev")
    assert [(s.guid, s.words, s.tags, s.line) for s in read] == [
        ("dev-0", ("Rome",), ("B-LOC",), 1),
        ("dev-1", ("I", "saw", "John"), ("O", "O", "B-PER"), 5),
        ("dev-2", ("Mary", "Smith"), ("B-PER", "I-PER"), 11)]


@pytest.mark.parametrize("text", [
    "-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n\n",
    "EU NNP I-NP I-ORG\nrejects VBZ I-VP O\n\n-DOCSTART- -X- O O",
])
def test_byte_order_mark_reads_like_its_absence(tmp_path, text):
    """A UTF-8 byte-order mark is neither a sentence (`-DOCSTART-`) nor part of a word."""
    plain = conll_data.read_conll(_write(tmp_path, text, "plain"))
    marked = conll_data.read_conll(_write(tmp_path, "\ufeff" + text, "marked"))
    assert marked == plain
    assert [s.words for s in marked] == [("EU", "rejects")]


@pytest.mark.parametrize("text, where, message", [
    ("EU NNP I-ORG\n", ":1:", "expected 4 space-separated columns"),
    ("EU NNP I-NP I-ORG\n\nx NN I-NP O extra\n", ":3:", "got 5"),
    ("EU NNP I-NP I-ORG\nx NN I-NP I-FOO\n", ":2:", "unknown entity tag 'I-FOO'"),
    ("EU NNP I-NP E-ORG\n", ":1:", "unknown entity tag 'E-ORG'"),
    ("-DOCSTART- -X- O O\n\n-DOCSTART- -X- O O\nEU NNP I-NP I-ORG\n", ":1:", "empty document"),
    ("-DOCSTART- -X- O O\nEU NNP I-NP I-ORG\n\n-DOCSTART- -X- O O\n", ":4:", "empty document"),
    ("\n\n", ":", "no sentences"),
    (b"EU NNP I-NP I-ORG\ncaf\xe9 NN I-NP O\n", ":2:", "not UTF-8"),
])
def test_bad_input_names_file_and_line(tmp_path, text, where, message):
    path = _write(tmp_path, text)
    with pytest.raises(conll_data.ConllFormatError) as raised:
        conll_data.read_conll(path)
    assert isinstance(raised.value, ValueError)
    assert f"{path}{where}" in str(raised.value)
    assert message in str(raised.value)


def test_prediction_lines_check_lengths():
    sentence = conll_data.TaggedSentence("dev-3", ("a", "b"), ("O", "O"), 1)
    with pytest.raises(ValueError, match="1 predicted tag sequences for 2 sentences"):
        list(conll_data.prediction_lines([sentence, sentence], [("O", "O")]))
    with pytest.raises(ValueError, match="sentence dev-3: 1 predicted tags for 2 words"):
        list(conll_data.prediction_lines([sentence], [("O",)]))


def test_each_split_reads_the_one_file_of_its_names_there(tmp_path):
    from bert_tf.errors import UsageError
    with pytest.raises(UsageError, match=r"^--data_dir is required: the folder of the "
                                         r"CoNLL-2003 files \(eng.train or train.txt"):
        conll_data.split_file(None, "train")
    with pytest.raises(FileNotFoundError, match=r"no eng.testa or valid.txt for the dev split"):
        conll_data.split_file(str(tmp_path), "dev")
    (tmp_path / "valid.txt").write_text("EU NNP B-NP I-ORG\n")
    assert conll_data.split_file(str(tmp_path), "dev") == str(tmp_path / "valid.txt")
    (tmp_path / "eng.testa").write_text("EU NNP B-NP I-ORG\n")
    with pytest.raises(UsageError, match=r"both eng.testa and valid.txt are there for the dev "
                                         r"split; keep the one to read"):
        conll_data.split_file(str(tmp_path), "dev")
