"""The scripts' start: root wrappers and installed commands, and a Ctrl-C while they load."""

import contextlib
import importlib
import io
import re
import signal
import subprocess
import sys
import time

import pytest

from bert_tf import launch
from tests_shared import REPO, load_script

ROOT_SCRIPTS = sorted(path.name for path in REPO.glob("*.py")
                      if path.name not in ("setup.py", "conftest.py"))


def _console_scripts():
    """setup.py's console scripts as (command, module, attribute)."""
    return re.findall(r'"(bert_\w+)=([\w.]+):(\w+)"', (REPO / "setup.py").read_text())


def test_every_root_script_and_command_launches_its_script():
    commands = {name: (module, attribute) for name, module, attribute in _console_scripts()}
    assert len(ROOT_SCRIPTS) == 10
    for script in ROOT_SCRIPTS:
        program = script.removesuffix(".py")
        assert f'launch("{program}")' in (REPO / script).read_text(), script
        assert commands.pop(f"bert_{program}") == ("bert_tf.launch", program)
        assert importlib.util.find_spec(f"bert_tf.scripts.{program}"), program
        assert getattr(launch, program).__name__ == program
    assert commands == {"bert_evaluate_squad": ("bert_tf.evaluate_squad", "main")}


def test_installed_command_runs_its_script(monkeypatch):
    """`bert_export_savedmodel --help`: the command shows that script's help."""
    load_script("export_savedmodel.py")
    monkeypatch.setattr(sys, "argv", [str(REPO / ".venv/bin/bert_export_savedmodel"), "--help"])
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), pytest.raises(SystemExit) as stop:
        launch.export_savedmodel()
    assert stop.value.code == 0
    assert "Exports a checkpoint as a SavedModel that takes raw text" in stdout.getvalue()
    assert "--kind: <classifier|encoder|" in stdout.getvalue()
    assert "USAGE:" not in stdout.getvalue()


def _wait_until_loading_tensorflow(process, seconds=60):
    """Waits until `process` has mapped TensorFlow's library: its import has begun."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        with open(f"/proc/{process.pid}/maps") as maps:
            if "libtensorflow" in maps.read():
                return
        time.sleep(0.01)
    pytest.fail("the script never began to import TensorFlow")


def test_ctrl_c_while_importing_ends_in_one_line():
    """A real SIGINT while TensorFlow loads: one line and exit 130, as later in the run."""
    process = subprocess.Popen([sys.executable, "run_squad.py", "--output_dir=/nonexistent"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    _wait_until_loading_tensorflow(process)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGINT, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == (
        "run_squad: error: interrupted by SIGINT (Ctrl-C) while starting")
