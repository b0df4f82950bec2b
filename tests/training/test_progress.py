"""Training shows a progress bar on a terminal and log lines elsewhere (the log lines
are checked on a real run in tests/scripts/test_run_pretraining.py)."""

import io
import os
import pty
import re

from bert_tf.training.progress import Progress


def test_progress_bar_on_a_terminal():
    """A real pseudo-terminal: one line redrawn in place, ended once finished."""
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal:
        progress = Progress(num_steps=4, stream=terminal)
        assert progress.is_terminal
        for step in (2, 4):
            progress.report(step, {"loss": 8.0 / step, "masked_lm_accuracy": 0.1}, 1e-4, 123.45)
        progress.close()  # already ended: no second line break
    shown = b""
    while True:  # until the closed terminal reads as ended (EIO) or empty
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    shown = shown.decode()
    frames = re.findall(r"\rstep (\d)/4 \[([=> ]{30})\] loss=(\d\.\d{4}) seq/s=123\.5\x1b\[K",
                        shown)
    assert frames == [("2", "=" * 15 + ">" + " " * 14, "4.0000"), ("4", "=" * 30, "2.0000")]
    assert shown.endswith("\x1b[K\r\n")  # one line break, after the finished bar


def test_no_bar_elsewhere():
    stream = io.StringIO()
    progress = Progress(num_steps=4, stream=stream)
    progress.report(4, {"loss": 1.0}, 1e-4, 10.0)
    progress.close()
    assert not progress.is_terminal and stream.getvalue() == ""
