"""Exporting or serving a trained model with the settings it was trained with.

A served model must read text as it was trained to: with the same casing,
and best with the same sequence length and SQuAD windows. The export tools
(`export_savedmodel.py`, `classify_text.py --model_dir`) once defaulted to
`--do_lower_case=True` whatever the model, so a cased NER model was served
lower-casing its input: wrong entities, and no error.

`settings` takes every flag the user leaves unset from the run's record
(`run.json`, which each runner writes beside the model), and the casing,
where there is no record (an original release or HuggingFace folder),
from the vocabulary: one with capitals belongs to a cased model. A flag
given against the record is logged; given against the recorded casing, it
is refused, since no model reads text well in the casing it never saw.
So is serving a model as another kind than its run trained it for
(`run.json`'s `serving_kind`; any model serves as an encoder), and with
files that are not the ones it was trained with: another vocabulary (its
ids would mean other words), an edited `bert_config.json` (another
activation computes other numbers from the same weights) or a
`labels.txt` reordered or renamed (each probability would carry another
label's name). The export itself runs without an error in each case.
"""

import os

from absl import logging

from bert_tf.checkpoints import CheckpointError, checkpoint_folder, config_beside
from bert_tf.checkpoints.labels import LABELS_FILE, read_labels
from bert_tf.errors import UsageError
from bert_tf.file_digests import file_sha256
from bert_tf.tasks.run_record import RECORD_FILE, recorded_run
from bert_tf.tokenization.vocab import load_vocab, vocab_is_lower_cased


# The SavedModel kinds whose outputs are named by the folder's labels.txt.
_LABELED_KINDS = ("classifier", "ner")
# The Python types of the recorded values, by absl flag type.
_TYPES = {"bool": bool, "int": int, "float": (int, float)}


def settings(flag_values, model_dir, names, vocab_file=None, kind=None):
    """`{name: value}` for the flags `names`, unset ones as `model_dir`'s model was trained.

    Args:
        flag_values: absl's `FLAGS`; `do_lower_case` among `names` defaults
            to None (as trained).
        model_dir: the model's checkpoint folder or prefix.
        names: the flags to settle, e.g. ("do_lower_case", "max_seq_length").
        vocab_file: the vocabulary, if not `vocab.txt` of the folder (for
            the casing where no run is recorded).
        kind: the SavedModel kind the model is to be served as.

    Raises:
        UsageError: a `kind` other than the recorded run's (or "encoder"),
            `--do_lower_case` given against the recorded run, or an
            unreadable record.
    """
    folder = checkpoint_folder(model_dir)
    record = recorded_run(folder) or {}
    if kind is not None:
        _check_kind(folder, record, kind)
    check_trained_files(folder, record, vocab_file, needs_labels=kind in _LABELED_KINDS)
    trained = record.get("task", {})
    chosen = {}
    for name in names:
        flag = flag_values[name]
        if name not in trained:
            chosen[name] = flag.value
            continue
        wanted = _TYPES.get(flag.flag_type(), object)
        if not isinstance(trained[name], wanted) or (wanted is int
                                                     and isinstance(trained[name], bool)):
            raise UsageError(f"{os.path.join(folder, RECORD_FILE)}: {name}="
                             f"{trained[name]!r} is not a {flag.flag_type()}; is the file "
                             "one a runner wrote?")
        if not flag.present:
            chosen[name] = trained[name]
            logging.info("--%s=%s, as the model was trained (%s)", name, trained[name],
                         os.path.join(folder, RECORD_FILE))
        elif flag.value != trained[name] and name == "do_lower_case":
            raise UsageError(f"--do_lower_case={flag.value}, but the model in {folder} was "
                             f"trained with --do_lower_case={trained[name]} ({RECORD_FILE}); "
                             "leave the flag out to read text as it was trained")
        else:
            if flag.value != trained[name]:
                logging.warning("--%s=%s, but the model in %s was trained with %s", name,
                                flag.value, folder, trained[name])
            chosen[name] = flag.value
    if chosen.get("do_lower_case", False) is None:
        vocab_file = vocab_file or os.path.join(folder, "vocab.txt")
        if os.path.exists(vocab_file):
            chosen["do_lower_case"] = vocab_is_lower_cased(vocab_file)
            logging.info("--do_lower_case=%s, from the casing of %s (no %s)",
                         chosen["do_lower_case"], vocab_file, RECORD_FILE)
        else:  # the export names the missing vocabulary
            chosen["do_lower_case"] = True
    return chosen


def check_trained_files(folder, record, vocab_file=None, needs_labels=False):
    """Refuses a vocabulary, config or label list other than the ones `record` was trained with.

    Args:
        folder: the model's checkpoint folder.
        record: its `run.json`, parsed (what a record does not hold is not
            checked: records of older versions, original releases).
        vocab_file: the vocabulary to serve with, if not `vocab.txt` of `folder`.
        needs_labels: compare `labels.txt` of `folder` too.

    Raises:
        UsageError: naming the file that differs and what the record says.
    """
    model = record.get("model") if isinstance(record.get("model"), dict) else {}
    record_path = os.path.join(folder, RECORD_FILE)
    vocab_file = vocab_file or os.path.join(folder, "vocab.txt")
    if model.get("vocab_sha256") and os.path.isfile(vocab_file) and not _trained_vocabulary(
            vocab_file, folder, model["vocab_sha256"]):
        raise UsageError(f"{vocab_file}: not the vocabulary the model in {folder} was trained "
                         f"with ({record_path} holds another's SHA-256); its ids would mean "
                         "other words. Serve it with the vocabulary it was trained with")
    trained_config = model.get("bert_config")
    try:
        config = config_beside(folder).to_dict() if isinstance(trained_config, dict) else None
    except CheckpointError:  # no config yet (an interrupted run's folder): the export names it
        config = None
    if config is not None:
        changed = [f"{key}={config.get(key)!r} (trained: {value!r})"
                   for key, value in sorted(trained_config.items()) if config.get(key) != value]
        if changed:
            raise UsageError(f"the config in {folder} differs from the one its model was "
                             f"trained with ({record_path}): {', '.join(changed)}")
    trained_labels = record.get("task", {}).get("labels") if isinstance(
        record.get("task"), dict) else None
    labels_file = os.path.join(folder, LABELS_FILE)
    if needs_labels and trained_labels and os.path.isfile(labels_file):
        labels = list(read_labels(labels_file))
        if labels != trained_labels:
            raise UsageError(f"{labels_file}: labels {labels}, but the model was trained "
                             f"with {trained_labels}, in that order ({record_path}); each "
                             "output would be named after another label")


def _trained_vocabulary(vocab_file, folder, trained_sha256):
    """Whether `vocab_file` holds the tokens of the vocabulary whose SHA-256 was recorded.

    Its bytes may differ where its tokens do not (another line ending, a
    BOM): it is then compared token by token with the folder's own
    `vocab.txt`, where that one is the recorded file.
    """
    if file_sha256(vocab_file) == trained_sha256:
        return True
    beside = os.path.join(folder, "vocab.txt")
    return (os.path.isfile(beside) and not os.path.samefile(beside, vocab_file)
            and file_sha256(beside) == trained_sha256
            and load_vocab(vocab_file) == load_vocab(beside))


def _check_kind(folder, record, kind):
    """Refuses to serve a model as another kind than its run recorded (any model has an encoder).

    A NER tagger and a classifier have heads of the same names and shapes,
    so without this a NER folder served as a classifier would classify with
    its tagging head, and say nothing. Records written before runs recorded
    their kind are not checked.
    """
    if "serving_kind" not in record or kind in ("encoder", record["serving_kind"]):
        return
    trained_as, task = record["serving_kind"], record.get("task", {}).get("task")
    served_as = (f"serves as a {trained_as} SavedModel (export_savedmodel.py "
                 f"--kind={trained_as}) or an encoder, not as a {kind}" if trained_as
                 else f"has no {kind} SavedModel, only its encoder's (--kind=encoder)")
    raise UsageError(f"{os.path.join(folder, RECORD_FILE)}: the model in {folder} was "
                     f"trained for task {task} and {served_as}")
