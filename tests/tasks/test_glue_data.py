"""GLUE readers on the release's real files, and their errors on bad rows."""

import pytest

from bert_tf.errors import UsageError
from bert_tf.tasks.glue_data import get_task
from tests_shared import shared_path

# (task, split, examples in the file, first text_a start, first label)
REAL = [
    ("MRPC", "train", 3668, "Amrozi accused his brother", 1),
    ("MRPC", "dev", 408, "He said the foodservice pie", 1),
    ("MRPC", "test", 1725, "PCCW's chief operating officer", None),
    ("CoLA", "train", 8551, "Our friends won't buy this analysis", 1),
    ("CoLA", "test", 1063, "Bill whistled past the house.", None),
    ("RTE", "dev", 277, "Dana Reeve, the widow", 1),
    ("SST-2", "dev", 872, "it 's a charming and often affecting journey", 1),
    ("STS-B", "dev", 1500, "A man with a hard hat is dancing.", 5.0),
]


@pytest.mark.parametrize("task_name,split,count,text,label", REAL)
def test_real_files(task_name, split, count, text, label):
    examples = get_task(task_name).read(str(shared_path("glue", task_name)), split)
    assert len(examples) == count
    assert examples[0].text_a.startswith(text)
    assert examples[0].label == label


def test_pairs_and_singles():
    mrpc = get_task("mrpc").read(str(shared_path("glue", "MRPC")), "dev")
    assert mrpc[0].text_b.startswith('"The foodservice pie business')
    sst = get_task("sst2").read(str(shared_path("glue", "SST-2")), "dev")
    assert sst[0].text_b is None


def _write(tmp_path, text):
    (tmp_path / "train.tsv").write_text(text, encoding="utf-8")
    return str(tmp_path)


def test_short_row_names_file_and_line(tmp_path):
    data_dir = _write(tmp_path, "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n1\tc\n")
    with pytest.raises(ValueError, match=r"train.tsv:3: expected at least 4 tab-separated "
                                         r"columns, got 2"):
        get_task("rte").read(data_dir, "train")


def test_unknown_label_names_file_and_line(tmp_path):
    data_dir = _write(tmp_path, "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tmaybe\n")
    with pytest.raises(ValueError, match=r"train.tsv:2: label 'maybe' is not one of "
                                         r"\['entailment', 'not_entailment'\]"):
        get_task("rte").read(data_dir, "train")


def test_empty_split_and_missing_file(tmp_path):
    data_dir = _write(tmp_path, "index\tsentence1\tsentence2\tlabel\n")
    with pytest.raises(ValueError, match="split 'train' of task rte has no examples"):
        get_task("rte").read(data_dir, "train")
    with pytest.raises(FileNotFoundError, match="dev.tsv: file not found"):
        get_task("rte").read(data_dir, "dev")


def test_unknown_task():
    with pytest.raises(UsageError, match="--task_name=foo: unknown task; .*, xnli or tsv"):
        get_task("foo")


def test_xnli_layouts_and_language_filter(tmp_path, caplog):
    from bert_tf.tasks.xnli_data import XnliTask
    (tmp_path / "multinli").mkdir()
    (tmp_path / "multinli" / "multinli.train.de.tsv").write_text(
        "premise\thypo\tlabel\nEin Hund.\tEin Tier.\tentailment\nJa.\tNein.\tcontradictory\n",
        encoding="utf-8")
    header = "\t".join(["language", "gold_label"] + [f"c{i}" for i in range(2, 6)]
                       + ["sentence1", "sentence2"])
    rows = [["de", "neutral", "", "", "", "", "Er lief.", "Er rannte schnell."],
            ["en", "entailment", "", "", "", "", "He ran.", "He moved."],
            ["de ", "neutral", "", "", "", "", "Sie las.", "Sie lernte."]]  # a stray space
    (tmp_path / "xnli.dev.tsv").write_text(
        "\n".join([header] + ["\t".join(r) for r in rows]) + "\n", encoding="utf-8")
    task = XnliTask("de")
    train = task.read(str(tmp_path), "train")
    assert [e.label for e in train] == [1, 0]  # entailment, contradiction
    with open(tmp_path / "multinli" / "multinli.train.de.tsv", "a", encoding="utf-8") as f:
        f.write("Ein Mann\tmit Tab\tentailment\tneutral\n")  # a tab inside the premise
    with caplog.at_level("WARNING"):
        assert len(task.read(str(tmp_path), "train")) == 3  # read as the original reads it
    assert "multinli.train.de.tsv:4: 1 row(s), the first on this line, have more than the 3" \
        in caplog.text
    dev = task.read(str(tmp_path), "dev")
    assert [(e.text_a, e.label) for e in dev] == [("Er lief.", 2), ("Sie las.", 2)]


def test_own_tsv_task_reads_header_and_labels(tmp_path):
    from bert_tf.tasks.glue_data import tsv_task
    (tmp_path / "labels.txt").write_text("austen\nblake\n")
    (tmp_path / "train.tsv").write_text("label\tsentence\nblake\tTyger Tyger.\n")
    (tmp_path / "test.tsv").write_text("sentence\nEmma smiled.\n")
    task = tsv_task(str(tmp_path))
    example = task.read(str(tmp_path), "train")[0]
    assert (example.text_a, example.label) == ("Tyger Tyger.", 1)
    assert task.read(str(tmp_path), "test")[0].label is None
    (tmp_path / "train.tsv").write_text("text\tlabel\nTyger Tyger.\tblake\n")
    with pytest.raises(ValueError, match=r"train.tsv:1: the first line is not a header naming "
                                         r"the columns: \['text', 'label'\] lacks "
                                         r"\['sentence1', 'sentence2'\] \(the text is in a "
                                         r"column `sentence`, or in"):
        tsv_task(str(tmp_path))


MRPC_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"


def test_bytes_that_are_not_utf8_name_file_and_line(tmp_path):
    (tmp_path / "train.tsv").write_bytes(
        (MRPC_HEADER + "1\t1\t2\tA man walks.\tA man runs.\n").encode()
        + b"0\t3\t4\tCaf\xe9 au lait.\tTea.\n")
    with pytest.raises(ValueError, match=r"train.tsv:3: not UTF-8 \(.*byte 0xe9"):
        get_task("mrpc").read(str(tmp_path), "train")


def test_a_carriage_return_inside_a_field_is_named(tmp_path):
    data_dir = _write(tmp_path, MRPC_HEADER + "1\t1\t2\tA man\rwalks.\tA man walks.\n")
    with pytest.raises(ValueError, match=r"train.tsv:2: a carriage return \(\\r\) inside "
                                         r"a field"):
        get_task("mrpc").read(data_dir, "train")
    # Line ends written "\r\n" are line ends.
    data_dir = _write(tmp_path, MRPC_HEADER.replace("\n", "\r\n") + "1\t1\t2\ta\tb\r\n")
    assert get_task("mrpc").read(data_dir, "train")[0].text_b == "b"


def test_labels_file_that_is_not_utf8_names_its_line(tmp_path):
    from bert_tf.tasks.glue_data import tsv_task
    (tmp_path / "labels.txt").write_bytes(b"austen\nblak\xe9\n")
    (tmp_path / "train.tsv").write_text("label\tsentence\nblake\tTyger Tyger.\n")
    with pytest.raises(ValueError, match=r"labels.txt:2: not UTF-8 \(.*byte 0xe9"):
        tsv_task(str(tmp_path))


@pytest.mark.parametrize("score", ["nan", "inf", "-Infinity", "1e999"])
def test_a_score_that_is_not_finite_is_refused(tmp_path, score):
    header = "\t".join(f"c{i}" for i in range(7)) + "\tsentence1\tsentence2\tscore\n"
    data_dir = _write(tmp_path, header + "\t" * 7 + "A dog.\tA cat.\t2.5\n"
                      + "\t" * 7 + f"A man.\tA boy.\t{score}\n")
    with pytest.raises(ValueError, match=rf"train.tsv:3: score '{score}' is not a finite "
                                         "number"):
        get_task("sts-b").read(data_dir, "train")


def test_rows_with_extra_fields_are_read_with_one_warning(tmp_path, caplog):
    """As in the original, fields past the header's are not read; one warning says so."""
    data_dir = _write(tmp_path, MRPC_HEADER + "1\t1\t2\tA\tB\n1\t3\t4\tC\tD\tlost\n"
                      "0\t5\t6\tE\tF\n0\t7\t8\tG\tH\tlost\tlost\n")
    with caplog.at_level("WARNING"):
        examples = get_task("mrpc").read(data_dir, "train")
    assert [(e.text_a, e.text_b) for e in examples] == [("A", "B"), ("C", "D"), ("E", "F"),
                                                        ("G", "H")]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{data_dir}/train.tsv:3: 2 row(s), the first on this "
                                  "line, have more than the 5 tab-separated fields of the "
                                  "header")


def test_own_tsv_task_without_a_label_column_names_the_file(tmp_path):
    from bert_tf.tasks.glue_data import tsv_task
    (tmp_path / "labels.txt").write_text("austen\nblake\n")
    (tmp_path / "train.tsv").write_text("sentence\nTyger Tyger.\n")
    with pytest.raises(ValueError, match=r"train.tsv:1: the header has no `label` column; "
                                         "the train split needs labels"):
        tsv_task(str(tmp_path)).read(str(tmp_path), "train")


def test_own_tsv_task_with_only_a_test_file(tmp_path):
    from bert_tf.tasks.glue_data import tsv_task
    (tmp_path / "labels.txt").write_text("austen\nblake\n")
    (tmp_path / "test.tsv").write_text("sentence\nEmma smiled.\n")
    task = tsv_task(str(tmp_path))
    assert task.read(str(tmp_path), "test")[0].text_a == "Emma smiled."
    with pytest.raises(FileNotFoundError, match="train.tsv: file not found"):
        task.read(str(tmp_path), "train")


@pytest.mark.parametrize("task_name,split,found", [
    ("MRPC", "train", "its label column holds the label '1'"),
    ("MRPC", "test", "it starts with the number 0"),
    ("STS-B", "dev", "its label column holds the label '5.000'"),
    ("SST-2", "dev", "its label column holds the label '1'")])
def test_a_file_without_its_header_is_refused_not_read_one_row_short(tmp_path, task_name,
                                                                     split, found):
    """The original skips line 1 of these files as the header: a file without one lost
    its first example, and a test file's predictions were matched to the wrong rows."""
    task = get_task(task_name)
    lines = (shared_path("glue", task_name) / task.files[split]).read_text(
        encoding="utf-8-sig").splitlines(keepends=True)
    (tmp_path / task.files[split]).write_text("".join(lines[1:]), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{task.files[split]}:1: a row of data where the "
                                         rf"header should be \({found}\); task "
                                         rf"{task.name}'s files start with a header line"):
        task.read(str(tmp_path), split)


def test_a_blank_line_is_named_as_one(tmp_path):
    data_dir = _write(tmp_path, "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n\n")
    with pytest.raises(ValueError, match="train.tsv:3: a blank line; each line is one example "
                                         "of at least 4 tab-separated columns"):
        get_task("rte").read(data_dir, "train")


def test_own_tsv_task_needs_two_labels_and_one_layout(tmp_path):
    """One label trained to a loss of 0; pairs in train.tsv and single texts in dev.tsv
    trained on one and scored on the other, both without a word."""
    from bert_tf.tasks.glue_data import tsv_task
    (tmp_path / "labels.txt").write_text("only\n")
    (tmp_path / "train.tsv").write_text("sentence1\tsentence2\tlabel\na\tb\tonly\n")
    with pytest.raises(ValueError, match=r"labels.txt: 1 label; a classifier needs two or more"):
        tsv_task(str(tmp_path))
    (tmp_path / "labels.txt").write_text("yes\nno\n")
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\na\tyes\n")
    with pytest.raises(ValueError, match=r"train.tsv holds pairs, dev.tsv holds single "
                                         r"sentences; every split needs the same layout"):
        tsv_task(str(tmp_path))
