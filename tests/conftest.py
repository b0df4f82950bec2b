"""Shared fixtures: paths to the real data in ../shared/data and tiny configs.

XLA compiles the suite's programs at LLVM's optimisation level 1, not 2:
the same XLA programs, compiled sooner. The tests' models are tiny, so a
compiled evaluation or prediction pass (the default at small hidden sizes)
spent more time compiling than running. On the 2-core AVX2 machine the
classification and NER task tests took 77 s instead of 88 in one process
(75 with no XLA at all), and a sixth of the suite in two workers 256 s
instead of 293. Level 0 was no quicker, and it moved results: its machine
code fuses no multiply-adds, and the fused GELU's gradient missed
PyTorch's by 3e-5 near saturation. Processes the tests start inherit the setting.
"""

import os
import pathlib

import pytest

os.environ["XLA_FLAGS"] = " ".join(
    filter(None, [os.environ.get("XLA_FLAGS"), "--xla_backend_optimization_level=1"]))

from tests_shared import shared_path

# Files the tests load or start as processes: --doctest-modules must not import them
# (importing one registers a TFDS builder or configures devices for the whole suite).
collect_ignore = ["scripts/tiny_tfds_builder.py", "training/distributed_equivalence.py",
                  "training/tiny_training_run.py"]


# The files that take longest, longest first (seconds of one worker on the 2-core AVX2
# machine, 2026-12-07: 97 down to 31). `make test` hands whole files to its two workers in
# collection order (--no-loadscope-reorder; pytest-xdist's own order, by number of tests,
# put these last): begun first, they no longer leave one worker on the demo or the
# multi-worker tests while the other has finished, and short files fill the end.
LONGEST_FIRST = ("training/test_multi_worker.py", "scripts/test_run_pretraining.py",
                 "demo/test_run_demo.py", "tasks/test_classification_task.py",
                 "serving/test_served_outputs.py", "serving/test_span_qa.py",
                 "serving/test_scripts.py", "tasks/test_token_features.py",
                 "tasks/test_squad_task.py", "training/test_resume.py",
                 "data/test_dynamic_masking.py", "training/test_distribution.py",
                 "training/test_trainer.py", "scripts/test_run_classifier.py",
                 "bench/test_squad_parity.py", "serving/test_text_module.py",
                 "serving/test_ner_export.py", "tasks/test_swag_task.py")


assert all((pathlib.Path(__file__).parent / name).exists() for name in LONGEST_FIRST), \
    "a file of LONGEST_FIRST was moved or renamed"


def pytest_collection_modifyitems(items):
    """Moves the tests of `LONGEST_FIRST` to the front, in its order (others keep theirs)."""
    rank = {f"tests/{name}": index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture(scope="session")
def uncased_vocab_file():
    return str(shared_path("vocab", "bert-base-uncased-vocab.txt"))


@pytest.fixture(scope="session")
def minilm_dir():
    return shared_path("models", "all-MiniLM-L6-v2")


@pytest.fixture
def tiny_config():
    from bert_tf.config import BertConfig
    return BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=37,
                      max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture(scope="session")
def minilm_encoder(minilm_dir):
    """all-MiniLM-L6-v2 in our encoder, imported from its safetensors."""
    from bert_tf.checkpoints import config_beside, restore
    from bert_tf.modeling import BertEncoder
    encoder = BertEncoder(config_beside(str(minilm_dir)))
    restore(encoder, str(minilm_dir))
    return encoder


@pytest.fixture(scope="session")
def hf_minilm(minilm_dir):
    import transformers
    return transformers.BertModel.from_pretrained(str(minilm_dir)).eval()
