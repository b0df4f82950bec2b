"""A tiny training run as a process, for tests that send it signals or race it for a folder.

    python tiny_training_run.py OUTPUT_DIR NUM_STEPS

It holds the folder's `OutputDirLock`, as a runner does, trains the tiny model
of `tiny_training` with one step per call and a checkpoint every 1000 steps,
and exits as a runner's main does: with `TrainingInterrupted.exit_code`
after a stop signal.
"""

import pathlib
import sys

sys.path[:0] = [str(pathlib.Path(__file__).resolve().parents[2]),
                str(pathlib.Path(__file__).resolve().parents[1])]

from absl import logging  # noqa: E402

from bert_tf.training.interrupts import TrainingInterrupted  # noqa: E402
from bert_tf.training.run_dir import OutputDirLock  # noqa: E402
from training.tiny_training import dataset_fn, make_trainer  # noqa: E402


def main(output_dir, num_steps):
    logging.set_verbosity(logging.INFO)
    with OutputDirLock(output_dir):
        trainer = make_trainer(output_dir, steps_per_execution=1, save_checkpoints_steps=1000)
        trainer.checkpoints.restore_latest()
        try:
            trainer.train(dataset_fn(), num_steps=num_steps)
        except TrainingInterrupted as error:
            sys.exit(error.exit_code)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
