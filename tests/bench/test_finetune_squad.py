"""bench/finetune_squad.py end to end on a tiny random model and 8 real questions.

The benchmark is not a test, but it must keep running as our task code and
HF's API move: two training steps of each implementation (SQuAD 1.1), then
the checks that make its comparison fair (same initial logits; the SQuAD 2.0
train and dev questions come from disjoint articles).
"""

import json

import pytest
import transformers

import finetune_squad  # bench/, on the test path
from tests_shared import shared_path

TINY = dict(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=128)
RECIPE = finetune_squad.Recipe(learning_rate=1e-3, batch_size=4, eval_batch_size=8, seed=7)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A random tiny BERT saved the HuggingFace way (config.json + safetensors + vocab)."""
    folder = tmp_path_factory.mktemp("tiny_hf")
    transformers.BertModel(transformers.BertConfig(**TINY)).save_pretrained(folder)
    vocab = shared_path("vocab", "bert-base-uncased-vocab.txt")
    (folder / "vocab.txt").write_text(vocab.read_text(encoding="utf-8"), encoding="utf-8")
    return str(folder)


def run_tiny(model_dir, version, compare_hf):
    return finetune_squad.run(version, compare_hf, model_dir, str(shared_path("squad")),
                              train_questions=8, dev_questions=8, epochs=2.0, recipe=RECIPE,
                              max_seq_length=64, doc_stride=32, max_query_length=16,
                              max_steps=2)


def test_squad_v1_ours_and_hf_from_the_same_start(model_dir, capsys):
    facts, rows = run_tiny(model_dir, "1.1", compare_hf=True)
    assert facts["train questions"] == facts["dev questions"] == 8
    assert facts["train questions with >1 window"] > 0  # 64 tokens: long contexts are cut
    assert facts["train steps"] == 2
    # Same encoder weights and span head: the untrained models agree on dev windows.
    assert facts["initial dev logits, max |ours - HF|"] < 1e-5
    assert [name for name, _, _ in rows] == ["bert_tf", "HF transformers"]
    for _, results, seconds in rows:
        assert sorted(results) == ["exact_match", "f1"]
        assert 0 <= results["exact_match"] <= results["f1"] <= 100 and seconds > 0
    finetune_squad.print_table(facts, rows, RECIPE.batch_size)
    assert "| HF transformers |" in capsys.readouterr().out


def test_squad_v2_splits_dev_by_article(tmp_path):
    content = finetune_squad.load_squad_json(str(shared_path("squad", "dev-v2.0.json.gz")))
    train_file, dev_file = finetune_squad.squad_files(
        "2.0", str(shared_path("squad")), 8, 8, RECIPE.seed, str(tmp_path))
    half = len(content["data"]) // 2
    titles = [article["title"] for article in content["data"]]
    train = json.load(open(train_file, encoding="utf-8"))["data"]
    dev = json.load(open(dev_file, encoding="utf-8"))["data"]
    assert {a["title"] for a in train} <= set(titles[:half])
    assert {a["title"] for a in dev} <= set(titles[half:])
    assert all(len(qa["answers"]) <= 1 for a in train for p in a["paragraphs"] for qa in p["qas"])

