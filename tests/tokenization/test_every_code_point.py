"""Every Unicode code point through both tokenizers, and the tables behind the
graph one checked against the character rules themselves."""

import os
import unicodedata

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.tokenization import BasicTokenizer, GraphBasicTokenizer, char_classes
from bert_tf.tokenization import unicode_tables

NUM_CODE_POINTS = 0x110000


def _code_points():
    """Every assigned code point, and a sample of unassigned and private-use ones
    (surrogates cannot be encoded)."""
    cps = []
    for cp in range(NUM_CODE_POINTS):
        category = unicodedata.category(chr(cp))
        if category not in ("Cn", "Co", "Cs") or (category != "Cs" and cp % 4099 == 0):
            cps.append(cp)
    return cps


@pytest.mark.parametrize("lower", [True, False], ids=["uncased", "cased"])
def test_every_code_point_gives_the_reference_words(lower):
    if lower:
        # Between letters and alone; then before capital sigmas, which become
        # final after a cased character, looking back past case-ignorable ones.
        texts = [f"a{c}b {c} A{c}\u03a3 {c}\u03a3" for c in map(chr, _code_points())]
    else:
        texts = [f"a{c}b {c}" for c in map(chr, _code_points())]
    graph = GraphBasicTokenizer(lower)
    words = tf.function(lambda batch: graph(batch))(tf.constant(texts)).to_list()
    reference = BasicTokenizer(lower)
    mismatches = [(text, row) for text, row in zip(texts, words)
                  if [w.decode("utf-8") for w in row] != reference.tokenize(text)]
    assert mismatches == []


def test_uniform_categories_share_their_properties():
    """The tables evaluate the rules once for all of Cn, Co and Cs."""
    _, drop, space, punct = unicode_tables._properties()
    rules = [(drop, char_classes.is_dropped), (punct, char_classes.is_punctuation),
             (space, lambda c: char_classes.is_whitespace(c) or c.isspace())]
    uniform = [cp for cp in range(NUM_CODE_POINTS)
               if unicodedata.category(chr(cp)) in ("Cn", "Co", "Cs")]
    for table, rule in rules:
        assert np.array_equal(table[uniform], [rule(chr(cp)) for cp in uniform])


def test_tables_are_cached_on_disk_and_rebuilt_when_damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("BERT_TF_CACHE", str(tmp_path))
    build = unicode_tables.char_table.__wrapped__  # past the per-process cache
    built = build(True)
    path = unicode_tables.cache_path("uncased")
    assert path.startswith(str(tmp_path)) and os.path.exists(path)
    cached = build(True)
    assert np.array_equal(cached.entries, built.entries)
    assert np.array_equal(cached.expansions, built.expansions)
    good = open(path, "rb").read()
    for damaged in (b"not an npz file", good[:len(good) // 2]):  # garbage, truncated zip
        with open(path, "wb") as f:
            f.write(damaged)
        rebuilt = build(True)
        assert np.array_equal(rebuilt.entries, built.entries)
        assert np.load(path)["entries"].shape == built.entries.shape


def test_character_classes_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("BERT_TF_CACHE", str(tmp_path))
    classes = unicode_tables._character_classes.__wrapped__  # past the per-process cache
    built = classes()
    path = unicode_tables.cache_path("classes")
    assert path.startswith(str(tmp_path)) and os.path.exists(path)
    with open(path, "wb") as f:  # what the next process reads, not what it builds
        np.savez(f, solo=np.array("[a]"), ascii_kept=np.array("[b]"))
    assert classes() == {"solo": "[a]", "ascii_kept": "[b]"}
    assert built == {name: str(value)
                     for name, value in unicode_tables._build_character_classes().items()}
    assert built["ascii_kept"] == "[\\x{9}-\\x{A}\\x{D}\\x{20}-\\x{7E}]"
