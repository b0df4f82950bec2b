"""The benches' list and size flags refuse a name they do not know, before any work.

A misspelt implementation or task was dropped from the table without a
word (`finetune_ner.py`, `finetune_glue.py`'s HF rows), or stopped the
bench with a traceback after minutes of work (`pretraining_gutenberg.py`
after making its records, `ner_feature_table.py` after its first rows,
`serving_throughput.py` after its exports).
"""

import pytest
from absl import flags

from tests_shared import load_bench


@pytest.mark.parametrize("bench, flag, message", [
    ("finetune_ner", "--implementations=bert-tf,hf",
     "--implementations: each must be one of bert_tf, hf"),
    ("finetune_glue", "--compare=sst2", "--compare: each must be one of sst-2, mrpc, rte, "
                                        "sts-b, cola"),
    ("finetune_glue", "--tasks=mrpc,qnli", "--tasks: each must be one of sst-2, mrpc"),
    ("pretraining_gutenberg", "--implementations=ours,keras-hub",
     "--implementations: each must be one of ours, keras_hub"),
    ("pretraining_gutenberg", "--size=bse", "value should be one of <tiny|mini|small"),
    ("ner_feature_table", "--feature_layers=last,sum_last4",
     "--feature_layers: each must be one of embeddings, second_to_last, last, sum_last_four"),
    ("profile_ops", "--size=mini2", "value should be one of <tiny|mini|small"),
    ("pretraining_sample_text", "--size=Tiny", "value should be one of <tiny|mini|small"),
    ("serving_throughput", "--batch_sizes=1,x", "--batch_sizes: each must be a positive whole "
                                                "number"),
])
def test_an_unknown_name_is_refused_naming_the_flag(bench, flag, message):
    load_bench(bench)
    try:
        with pytest.raises(flags.IllegalFlagValueError, match=message):
            flags.FLAGS([f"{bench}.py", flag])
    finally:
        flags.FLAGS.unparse_flags()
