"""Real text from ../shared/data, as lists of strings, for parity tests and bench.

Each loader returns the texts of one source, every `every`-th one (1 = all),
so tests can take a fast sample and `bench/tokenizer_parity.py` everything.
"""

import csv
import gzip
import json
import os
import pathlib

SHARED_DATA = pathlib.Path(os.environ.get(
    "BERT_TF_SHARED_DATA",
    pathlib.Path(__file__).resolve().parents[3] / "shared" / "data"))

# Header names of the sentence columns in the GLUE TSVs; CoLA's train and dev
# files have no header and keep the sentence in column 3.
_GLUE_TEXT_HEADERS = ("#1 String", "#2 String", "sentence", "sentence1", "sentence2")
_COLA_TEXT_COLUMN = 3
GLUE_TASKS = ("MRPC", "CoLA", "RTE", "SST-2", "STS-B")
SQUAD_FILES = ("train-v1.1", "dev-v1.1", "dev-v2.0")


def _path(*parts):
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"missing shared data {path} (set BERT_TF_SHARED_DATA)")
    return path


def text_lines(name, every=1):
    """Non-blank lines of corpus/<name> (newline removed, otherwise raw)."""
    with open(_path("corpus", name), encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    return lines[::every]


def squad_texts(name, every=1):
    """Every context and question of squad/<name>.json.gz, in file order."""
    with gzip.open(_path("squad", f"{name}.json.gz"), "rt", encoding="utf-8") as f:
        articles = json.load(f)["data"]
    texts = []
    for article in articles:
        for paragraph in article["paragraphs"]:
            texts.append(paragraph["context"])
            texts.extend(qa["question"] for qa in paragraph["qas"])
    return texts[::every]


def conll_sentences(every=1):
    """CoNLL-2003 English sentences (train, testa, testb), words joined by spaces."""
    sentences = []
    for part in ("eng.train", "eng.testa", "eng.testb"):
        words = []
        with open(_path("conll2003", part), encoding="utf-8") as f:
            for line in f:
                fields = line.split()
                if fields and fields[0] != "-DOCSTART-":
                    words.append(fields[0])
                elif words:
                    sentences.append(" ".join(words))
                    words = []
        if words:
            sentences.append(" ".join(words))
    return sentences[::every]


def glue_sentences(task, every=1):
    """Every sentence of the GLUE task's TSV files (train, dev, test)."""
    texts = []
    for tsv in sorted(_path("glue", task).glob("*.tsv")):
        with open(tsv, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
        columns = [i for i, name in enumerate(rows[0]) if name in _GLUE_TEXT_HEADERS]
        if columns:
            rows = rows[1:]
        elif task == "CoLA":
            columns = [_COLA_TEXT_COLUMN]
        else:
            continue  # e.g. MRPC's dev_ids.tsv: ids only
        texts.extend(row[i] for row in rows for i in columns if i < len(row))
    return texts[::every]


def all_sources(every=1):
    """dict source name -> texts, for every source the parity bench covers."""
    sources = {
        "sample_text": text_lines("sample_text.txt", every),
        "gutenberg": text_lines("gutenberg_pretrain.txt", every),
        "conll2003": conll_sentences(every),
    }
    for name in SQUAD_FILES:
        sources[f"squad/{name}"] = squad_texts(name, every)
    for task in GLUE_TASKS:
        sources[f"glue/{task}"] = glue_sentences(task, every)
    return sources
