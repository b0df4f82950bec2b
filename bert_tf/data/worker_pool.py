"""Fast mode's worker processes: started without TensorFlow, stopped only by their parent.

Workers are spawned, not forked (a fork of a process running TensorFlow's
threads can hang), so each one imports the modules of its initializer and
of its tasks. This module and `instance_records`, which the tasks run,
import no TensorFlow: a worker is ready in a fraction of a second instead
of the seconds TensorFlow's import takes, which on a small corpus was most
of the run. (`sharded_pretraining_data`, which reads the input files
through TensorFlow's file system, is therefore not a worker's import.)

A worker ignores SIGTERM and SIGINT, which a scheduler or a Ctrl-C sends to
the whole process group. A worker killed while sending a shard's records
left half a message in the pool's result pipe, and the parent's pool waited
for the rest for ever (Python 3.11: 1 run in 10 under load). The parent,
which handles both signals, stops its workers instead: its pool shuts down
once the shards they are on are done; a parent killed outright is noticed
by each worker, which then ends (`PARENT_CHECK_SECONDS`).

Example:
  >>> from bert_tf.data.instance_records import worker_records
  >>> from bert_tf.data.pretraining_options import PretrainingDataOptions
  >>> vocab = {t: i for i, t in enumerate(["[PAD]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])}
  >>> options = PretrainingDataOptions(max_seq_length=8, dupe_factor=2)
  >>> with worker_pool(1, vocab, options) as pool:
  ...     records, summary = pool.submit(worker_records, [[[4, 5], [5, 4, 4]]], "0").result()
  >>> summary.num_instances == len(records) > 0
  True
"""

import concurrent.futures
import multiprocessing
import os
import signal
import threading
import time
from typing import Mapping

from bert_tf.data.instance_records import start_worker
from bert_tf.data.pretraining_options import PretrainingDataOptions

# How often a worker looks whether the process that started it is still there.
PARENT_CHECK_SECONDS = 1.0


def worker_pool(num_workers: int, vocab: Mapping[str, int],
                options: PretrainingDataOptions) -> concurrent.futures.ProcessPoolExecutor:
    """`num_workers` spawned processes, each with its `RecordMaker` built once."""
    return concurrent.futures.ProcessPoolExecutor(
        num_workers, mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_watched_worker, initargs=(os.getpid(), vocab, options))


def _exit_with_parent(parent_pid: int) -> None:
    """Ends this worker once `parent_pid` is gone.

    A parent killed by SIGTERM or SIGKILL runs no clean-up, and its spawned
    workers (some 80 MB each) would sleep on, orphaned, until the machine
    restarts.
    """
    while os.getppid() == parent_pid:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)


def _start_watched_worker(parent_pid: int, vocab: Mapping[str, int],
                          options: PretrainingDataOptions) -> None:
    """Process-pool initializer: `start_worker`, deaf to the group's stop signals, watching
    the parent."""
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()
    start_worker(vocab, options)
