"""Training shows a progress bar on a terminal and log lines elsewhere."""

import logging
import os
import pty
import re
import sys

from training.tiny_training import dataset_fn, make_trainer


def test_progress_bar_on_a_terminal(tmp_path, monkeypatch):
    """Standard error is a real pseudo-terminal here."""
    master, slave = pty.openpty()
    terminal = os.fdopen(slave, "w")
    monkeypatch.setattr(sys, "stderr", terminal)
    trainer = make_trainer(tmp_path, steps_per_execution=2)
    trainer.train(dataset_fn(), num_steps=4)
    terminal.flush()
    os.set_blocking(master, False)
    shown = os.read(master, 1 << 16).decode()
    terminal.close()
    os.close(master)
    frames = re.findall(r"\rstep (\d)/4 \[([=> ]{30})\] loss=(\d+\.\d{4}) seq/s=\d+\.\d", shown)
    assert [(step, bar.count("=")) for step, bar, _ in frames] == [("2", 15), ("4", 30)]
    assert shown.endswith("\r\n")  # the finished bar ends its line


def test_log_lines_elsewhere(tmp_path, caplog):
    """(Under pytest standard error is not a terminal.)"""
    trainer = make_trainer(tmp_path, steps_per_execution=2)
    with caplog.at_level(logging.INFO, logger="absl"):
        trainer.train(dataset_fn(), num_steps=4)
    steps = [r.getMessage() for r in caplog.records if r.getMessage().startswith("step ")]
    assert [line.split()[1] for line in steps] == ["2/4", "4/4"]
    assert re.fullmatch(r"step 4/4 loss=\S+ masked_lm_accuracy=\S+ masked_lm_loss=\S+ "
                        r"next_sentence_accuracy=\S+ next_sentence_loss=\S+ "
                        r"learning_rate=\S+ sequences/s=\S+", steps[-1])
