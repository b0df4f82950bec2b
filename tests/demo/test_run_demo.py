"""`make demo`'s script end to end, with short training: every stage runs and reports."""

import os
import re
import subprocess
import sys

from tests_shared import REPO


def test_demo_runs_every_stage(tmp_path):
    out = tmp_path / "demo"
    env = dict(os.environ, PY=sys.executable, DEMO_OUT=str(out), DEMO_PRETRAIN_STEPS="20",
               DEMO_PRETRAIN_EVAL_STEPS="2", DEMO_FINETUNE_EPOCHS="1")
    result = subprocess.run(["bash", str(REPO / "demo" / "run_demo.sh"), "O to sail to sea!"],
                            capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    stages = re.findall(r"^== (\d)/5 ", result.stdout, re.M)
    assert stages == ["1", "2", "3", "4", "5"]
    assert "demo finished in" in result.stdout
    vocab_size = len((out / "vocab.txt").read_text(encoding="utf-8").splitlines())
    assert f'"vocab_size": {vocab_size}' in (out / "bert_config.json").read_text()
    assert "global_step = 20" in (out / "pretrained" / "eval_results.txt").read_text()
    assert "evaluation at step 20 over 2 batches" in result.stderr
    assert "eval_accuracy = " in (out / "authors" / "eval_results.txt").read_text()
    labels = (out / "authors" / "labels.txt").read_text().split()
    prediction = re.search(r"^(\w+)\tO to sail to sea!$", result.stdout, re.M)
    assert prediction and prediction.group(1) in labels
    assert (out / "authors_savedmodel" / "saved_model.pb").exists()
