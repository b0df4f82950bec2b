"""Per-code-point tables that let the graph tokenizer mirror the reference.

The in-graph tokenizer never re-implements a character rule: every rule of
`char_classes` is evaluated here, once per code point, with Python's own
`unicodedata` and `str.lower()`, and the results are handed to TensorFlow as
a lookup table and two RE2 character classes. That is why the two tokenizers
agree on every character, whatever the Unicode version of TensorFlow's
bundled ICU (which lags or leads Python's by a few versions).

The table gives each code point its *fold*: what the original's cleaning
(and, when lower-casing, `str.lower()` + NFD + dropping accents) turns it
into. Whitespace folds to " ", dropped characters to nothing. One int32 entry
per code point holds flag bits in the low byte and, above it, the folded code
point, or, for folds that are not exactly one character (FLAG_MULTI), a row
of `expansions`.

Evaluating the rules over all 1.1M code points takes seconds, so the tables
and the character classes are cached on disk (`$BERT_TF_CACHE`, else
`$XDG_CACHE_HOME/bert_tf`, else `~/.cache/bert_tf`), keyed by Python's
Unicode version and by the source of the rules; an unwritable or damaged
cache only means building them again. Every process that builds the graph
tokenizer (a runner, an export, the data tool) reads them from there.

Example:

>>> table = char_table(do_lower_case=True)
>>> fold_of(table, "\u00c9"), fold_of(table, "\u00a0"), fold_of(table, "\u200b")
('e', ' ', '')
"""

import collections
import functools
import hashlib
import os
import sys
import tempfile
import unicodedata
import zipfile

import numpy as np
from absl import logging

from bert_tf.tokenization import char_classes

NUM_CODE_POINTS = 0x110000

FLAG_MULTI = 1            # folds to 0 or 2+ characters: see `expansions`
FLAG_CASED = 2            # cased, not case-ignorable (final-sigma context)
FLAG_CASE_IGNORABLE = 4   # skipped when looking for a final sigma's context
FLAG_ACCENT = 8           # an accent the fold strips: it belongs to the character before
FOLD_SHIFT = 8            # entries >> FOLD_SHIFT = folded char or expansion row

CAPITAL_SIGMA = 0x3A3
FINAL_SIGMA = 0x3C2

CharTable = collections.namedtuple("CharTable", ["entries", "expansions"])
CharTable.__doc__ = """Lookup tables of one casing mode (numpy arrays).

entries: int32 [NUM_CODE_POINTS], flag bits | (fold << FOLD_SHIFT).
expansions: int32 [rows, max fold length], folds of FLAG_MULTI code points
    padded with -1; row 0 is empty.
"""


# Categories whose members no rule tells apart: unassigned, private use and
# surrogates, 87% of the code space. The rules only look at the category (and
# at ASCII, all ordinary), so each of these shares the values of any member;
# `tests/tokenization` checks the whole table against the rules.
_UNIFORM_CATEGORIES = ("Cn", "Co", "Cs")


@functools.lru_cache(maxsize=None)
def _properties():
    """(ordinary code points, drop, space, punct) per `unicodedata`.

    drop/space/punct are boolean arrays over all code points; ordinary code
    points are those outside `_UNIFORM_CATEGORIES`.
    """
    index = {}  # category name -> small int, in order of appearance
    categories = np.fromiter(
        (index.setdefault(name, len(index)) for name in
         map(unicodedata.category, map(chr, range(NUM_CODE_POINTS)))),
        np.int8, NUM_CODE_POINTS)
    uniform = {name: categories == index[name] for name in _UNIFORM_CATEGORIES}
    ordinary = np.flatnonzero(~np.logical_or.reduce(list(uniform.values())))
    rules = (
        char_classes.is_dropped,
        # After cleaning, the original's `str.split()` also splits on the
        # few non-Zs characters Python counts as whitespace (U+2028, U+2029).
        lambda c: char_classes.is_whitespace(c) or c.isspace(),
        char_classes.is_punctuation,
    )
    properties = []
    for rule in rules:
        values = np.zeros(NUM_CODE_POINTS, bool)
        for members in uniform.values():
            values[members] = rule(chr(np.argmax(members)))
        values[ordinary] = [rule(chr(cp)) for cp in ordinary.tolist()]
        properties.append(values)
    return (ordinary, *properties)


def _sigma_is_final_after(prefixes):
    """For each prefix p, whether `(p + "\u03a3").lower()` ends in final sigma."""
    lowered = " ".join(p + "\u03a3" for p in prefixes).lower().split(" ")
    return np.array([s[-1] == "\u03c2" for s in lowered])


def _case_flags(chars):
    """FLAG_CASED / FLAG_CASE_IGNORABLE of `chars`, asked of `str.lower()` itself.

    A capital sigma becomes final after a cased letter, looking back past
    case-ignorable characters. So "c\u03a3" ends in final sigma iff c is cased
    and not ignorable, and "Ac\u03a3" iff c is either.
    """
    cased = _sigma_is_final_after(chars)
    cased_or_ignorable = _sigma_is_final_after(["A" + c for c in chars])
    return (np.where(cased, FLAG_CASED, 0)
            | np.where(cased_or_ignorable & ~cased, FLAG_CASE_IGNORABLE, 0))


def _folds(chars):
    """`lower_and_strip_accents` of each char, in one call on a joined string.

    U+0001 separates the characters: it has no case, decomposition or
    combining class, so per-character results are exactly the joined result.
    """
    return char_classes.lower_and_strip_accents("\x01".join(chars)).split("\x01")


@functools.lru_cache(maxsize=None)
def char_table(do_lower_case):
    """The table of one casing mode: from the disk cache, else built and cached."""
    arrays = _disk_cached("uncased" if do_lower_case else "cased", CharTable._fields,
                          lambda: _build_char_table(do_lower_case)._asdict())
    return CharTable(**arrays)


@functools.lru_cache(maxsize=None)
def _character_classes():
    """`{"solo": ..., "ascii_kept": ...}` RE2 classes: from the disk cache, else built."""
    arrays = _disk_cached("classes", ("solo", "ascii_kept"), _build_character_classes)
    return {name: str(value) for name, value in arrays.items()}


def _disk_cached(kind, names, build):
    """The arrays `names` of `cache_path(kind)`; if unreadable, `build()`'s, then written."""
    path = cache_path(kind)
    try:
        with np.load(path) as cached:
            return {name: cached[name] for name in names}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        pass
    arrays = build()
    _write_cache(path, arrays)
    return arrays


def _write_cache(path, arrays):
    """Writes `arrays` (a dict) to `path` atomically; a failure is logged, not raised."""
    temporary = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), suffix=".npz",
                                         delete=False) as f:
            temporary = f.name
            np.savez(f, **arrays)
        os.replace(temporary, path)
    except OSError as error:
        logging.info("character tables not cached (%s)", error)
        if temporary and os.path.exists(temporary):
            os.unlink(temporary)


def cache_path(kind):
    """Where tables of `kind` ("uncased", "cased", "classes") are cached; the name
    changes with the rules."""
    root = os.environ.get("BERT_TF_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser(os.path.join("~", ".cache")),
        "bert_tf")
    digest = hashlib.sha256()
    for module in (char_classes, sys.modules[__name__]):
        with open(module.__file__, "rb") as source:
            digest.update(source.read())
    return os.path.join(root, f"unicode_tables-unicode{unicodedata.unidata_version}-{kind}-"
                              f"{digest.hexdigest()[:16]}.npz")


def _build_char_table(do_lower_case):
    """Evaluates the rules for every code point (a few seconds)."""
    ordinary, drop, space, _ = _properties()
    folds = {}  # code point -> fold, where it is not the character itself
    entries = np.zeros(NUM_CODE_POINTS, np.int32)
    if do_lower_case:
        # Only what survives cleaning is ever lower-cased, and uniform code
        # points have neither case nor decomposition. Spaces and controls
        # would also break the joined-string tricks.
        cps = ordinary[~(drop[ordinary] | space[ordinary])]
        chars = [chr(cp) for cp in cps]
        entries[cps] |= _case_flags(chars)
        folds.update((cp, f) for cp, c, f in zip(cps, chars, _folds(chars)) if f != c)
        entries[[cp for cp in cps if folds.get(cp) == ""]] |= FLAG_ACCENT
        # The original deletes these before lower-casing: no sigma context.
        entries[drop] |= FLAG_CASE_IGNORABLE
    folds.update((cp, " ") for cp in np.flatnonzero(space))
    folds.update((cp, "") for cp in np.flatnonzero(drop))
    _check_folds(folds)
    targets = np.arange(NUM_CODE_POINTS, dtype=np.int32)
    multi = {cp: f for cp, f in folds.items() if len(f) != 1}
    width = max(1, *(len(f) for f in multi.values()))
    expansions = np.full((len(multi) + 1, width), -1, np.int32)
    for row, (cp, fold) in enumerate(sorted(multi.items()), start=1):
        expansions[row, :len(fold)] = [ord(c) for c in fold]
        targets[cp] = row
        entries[cp] |= FLAG_MULTI
    for cp, fold in folds.items():
        if len(fold) == 1:
            targets[cp] = ord(fold)
    entries |= targets << FOLD_SHIFT
    return CharTable(entries, expansions)


def _check_folds(folds):
    """The graph tokenizer classifies folded text; folding must not change
    what is whitespace or CJK (true of all Unicode data so far)."""
    for cp, fold in folds.items():
        cjk = char_classes.is_cjk(chr(cp))
        if fold.strip() and (any(c.isspace() for c in fold)
                             or any(char_classes.is_cjk(c) != cjk for c in fold)):
            raise AssertionError(f"fold of U+{cp:04X} changes its word class: {fold!r}")


def _re2_class(mask):
    """An RE2 character class of the code points where `mask` is true."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    ranges = [f"\\x{{{lo:X}}}" + (f"-\\x{{{hi - 1:X}}}" if hi - 1 > lo else "")
              for lo, hi in zip(edges[::2], edges[1::2])]
    return "[" + "".join(ranges) + "]"


def _build_character_classes():
    """The classes `solo_class` and `ascii_kept_class` return, as 0-d string arrays."""
    _, drop, _, punct = _properties()
    solo = punct.copy()
    for low, high in char_classes.CJK_RANGES:
        solo[low:high + 1] = True
    return {"solo": np.array(_re2_class(solo)), "ascii_kept": np.array(_re2_class(~drop[:128]))}


def solo_class():
    """RE2 class of the characters that are words of their own in folded text:
    punctuation and CJK ideographs."""
    return _character_classes()["solo"]


def ascii_kept_class():
    """RE2 class of the ASCII characters that cleaning keeps."""
    return _character_classes()["ascii_kept"]


def fold_of(table, char):
    """The fold of `char` according to `table` (for tests and docs)."""
    entry = int(table.entries[ord(char)])
    target = entry >> FOLD_SHIFT
    if not entry & FLAG_MULTI:
        return chr(target)
    return "".join(chr(cp) for cp in table.expansions[target] if cp >= 0)
