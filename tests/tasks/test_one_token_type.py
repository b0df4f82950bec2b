"""A model with one token type (`type_vocab_size: 1`) given sentence pairs is refused.

A pair's second text has segment id 1, which such a model (RoBERTa-style, a
distilled BERT saved with `BertConfig(type_vocab_size=1)`) has no row for:
without the refusal XLA read row 0 (exit 0, wrong numbers) and a plain
gather failed deep in the graph. Its single texts still run.
"""

import dataclasses
import json

import pytest

from bert_tf.errors import UsageError
from bert_tf.tasks import runner
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.glue_data import get_task
from bert_tf.tasks.model_files import resolve_model_files
from bert_tf.tasks.multiple_choice import SwagTask
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.tasks.squad import SquadTask
from tasks.task_runs import glue_subset, quick_options, tiny_model_files
from tests_shared import write_tiny_bert_config

REFUSED = (r"type_vocab_size=1, so the model has no token-type embedding for the second text "
           r"of a pair \(segment id 1\), but {pairs} pairs two texts; use a model with "
           r"type_vocab_size >= 2")


def _one_type(config_source="--bert_config_file=one_type.json"):
    return dataclasses.replace(tiny_model_files(type_vocab_size=1), config_source=config_source)


def test_the_config_is_named_as_the_flag_that_gave_it(tmp_path, uncased_vocab_file):
    config_file = write_tiny_bert_config(tmp_path / "bert_config.json", type_vocab_size=1)
    files = resolve_model_files(config_file, uncased_vocab_file)
    with pytest.raises(UsageError, match=rf"^--bert_config_file={config_file}: "
                                         + REFUSED.format(pairs="some data")):
        files.require_pairs("some data")
    # From a HuggingFace config.json beside --init_checkpoint (BertConfig(type_vocab_size=1)).
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps(dict(
        json.loads((tmp_path / "bert_config.json").read_text()), model_type="bert")))
    (hf / "model.safetensors").write_bytes(b"")
    files = resolve_model_files(None, uncased_vocab_file, str(hf))
    assert files.config.type_vocab_size == 1
    with pytest.raises(ValueError, match=rf"^--init_checkpoint={hf}: type_vocab_size=1"):
        files.require_pairs("x", error=ValueError)


@pytest.mark.parametrize("make, pairs", [
    (lambda files: SquadTask(files), r"task squad \(a question and its context\)"),
    (lambda files: SwagTask("swag", files, 32), r"task swag \(a context and each ending\)"),
    (lambda files: PretrainingTask(files, "records.tfrecord"),
     r"pretraining \(--input_file=records.tfrecord: sentences A and B of every example\)"),
])
def test_tasks_that_always_pair_refuse_it_before_any_work(make, pairs):
    with pytest.raises(UsageError, match=r"^--bert_config_file=one_type.json: "
                                         + REFUSED.format(pairs=pairs)):
        make(_one_type())
    make(tiny_model_files())  # two token types: fine


def test_a_pair_task_is_refused_naming_its_data_file(tmp_path):
    data = glue_subset(tmp_path, "MRPC", 8)
    task = ClassificationTask(get_task("MRPC"), str(data), _one_type(), max_seq_length=32)
    with pytest.raises(ValueError, match=rf"^--bert_config_file=one_type.json: " + REFUSED.format(
            pairs=rf"{data}/dev.tsv \(task mrpc\)")) as refused:
        task.read_split("dev")
    assert not isinstance(refused.value, UsageError)  # found in the data: exit 1
    with pytest.raises(ValueError, match=r"the model has no token-type embedding"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True))
    assert not (tmp_path / "out").exists()  # refused before any work


def test_single_sentences_are_read_and_run(tmp_path):
    data = glue_subset(tmp_path, "SST-2", 8)
    task = ClassificationTask(get_task("SST-2"), str(data), _one_type(), max_seq_length=16)
    examples = task.read_split("dev")
    batch = next(iter(task.dataset(examples, 8, is_training=False)))
    assert int(batch["segment_ids"].numpy().max()) == 0
    inputs = {name: batch[name] for name in ("input_ids", "input_mask", "segment_ids")}
    assert task.build_model()(inputs).shape == (8, 2)
