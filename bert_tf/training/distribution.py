"""The `tf.distribute` strategy a run asks for, who its chief is, and how many processes.

`--distribution_strategy` picks one of:

* `one_device`: the first GPU, else the CPU;
* `mirrored`: data-parallel over `--num_gpus` GPUs of this machine (all GPUs
  when 0); on a machine without GPUs, over its logical CPU devices (which
  is how the tests exercise it);
* `multi_worker_mirrored`: data-parallel over several machines (or
  processes), each one described by the `TF_CONFIG` environment variable
  (checked first: a message names what is wrong in it). Building the
  strategy waits for every worker of the cluster; TensorFlow says nothing
  meanwhile (worker 0 waits for ever), so a watcher process says every
  30 s which addresses do not answer, and gives up after
  `worker_wait_seconds` with a one-line error (`WaitingForWorkers`). A
  worker that dies later makes the others fail at their next collective
  (`WorkerLostError`, raised by the runner with one line);
* `tpu`: a Cloud TPU (`--tpu`, the original's `--tpu_name`, a `grpc://`
  address, or the TPU VM's own chips); `tpu_strategy` says why one cannot
  be reached, rather than waiting on a network that is not there.
"""

import json
import os
import signal
import subprocess
import sys
import threading

import tensorflow as tf
from absl import logging

from bert_tf.training import worker_watch

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
WORKER_WAIT_SECONDS = 900  # how long a worker waits for the others to start, by default
WAIT_REPORT_SECONDS = 30.0
COORDINATED_JOBS = ("chief", "worker")  # TF_CONFIG's jobs of the workers that train


class DistributionError(ValueError):
    """A strategy that cannot be built on this machine."""


class WorkerLostError(ConnectionError):
    """Another worker of a multi-worker run stopped or cannot be reached."""


def check_tf_config(text):
    """`(cluster, task type, task index)` of a `TF_CONFIG`; raises naming what is wrong.

    Example:

    >>> check_tf_config('{"cluster": {"worker": ["a:1", "b:2"]}, '
    ...                 '"task": {"type": "worker", "index": 1}}')
    ({'worker': ['a:1', 'b:2']}, 'worker', 1)
    >>> check_tf_config('{"cluster": {"worker": ["a:1", "b:2"]}, '
    ...                 '"task": {"type": "worker", "index": "1"}}')  # TensorFlow reads "1" too
    ({'worker': ['a:1', 'b:2']}, 'worker', 1)
    >>> check_tf_config('{"cluster": {"worker": ["a:1"]}, '
    ...                 '"task": {"type": "worker", "index": 1}}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    bert_tf.training.distribution.DistributionError: TF_CONFIG: task index 1 is not among ...
    """
    try:
        config = json.loads(text)
    except json.JSONDecodeError as e:
        raise DistributionError(f"TF_CONFIG is not valid JSON ({e})") from None
    if not isinstance(config, dict):
        raise DistributionError("TF_CONFIG is not a JSON object with \"cluster\" and \"task\"")
    cluster, task = config.get("cluster") or {}, config.get("task") or {}
    if not (isinstance(cluster, dict) and all(
            isinstance(addresses, list) and addresses
            and all(isinstance(a, str) and ":" in a for a in addresses)
            for addresses in cluster.values())):
        raise DistributionError('TF_CONFIG: "cluster" must map each job ("chief", "worker") '
                                'to a list of "host:port" addresses')
    if not cluster:
        return {}, None, None
    if not (isinstance(task, dict) and "type" in task and "index" in task):
        raise DistributionError('TF_CONFIG names a cluster but not this process\'s place in it: '
                                'add "task": {"type": "worker", "index": N}')
    kind, given = task["type"], task["index"]
    if kind not in cluster:
        raise DistributionError(f"TF_CONFIG: task type {kind!r} is not a job of its cluster "
                                f"({', '.join(sorted(cluster))})")
    try:  # a number, or its text ("1"), as TensorFlow's resolver reads it (int())
        index = None if isinstance(given, (bool, float)) else int(given)
    except (TypeError, ValueError):
        index = None
    if index is None or not 0 <= index < len(cluster[kind]):
        raise DistributionError(
            f"TF_CONFIG: task index {given!r} is not among the {len(cluster[kind])} {kind} "
            f"address(es) of its cluster (0 to {len(cluster[kind]) - 1})")
    return cluster, kind, index


class WaitingForWorkers:
    """While building a multi-worker strategy: says who it waits for, and gives up in time.

    A context manager around the strategy's construction, which blocks in
    TensorFlow (holding Python's interpreter lock) until every worker of the
    cluster has started. A watcher process (`worker_watch`) reports and ends
    the wait (SIGKILL: TensorFlow takes SIGTERM for its own during the
    wait, so the process ends with exit code 137). A Ctrl-C ends the
    process at once meanwhile (Python would act on it only once TensorFlow
    returned).

    Args:
        others: `{address: "worker 1"}` of the other processes of the cluster.
        wait_seconds: give up after this long (0: never).
    """

    def __init__(self, others, wait_seconds, report_seconds=WAIT_REPORT_SECONDS):
        self._others = others
        self._wait_seconds = wait_seconds
        self._report_seconds = report_seconds
        self._watcher = None
        self._previous = {}

    def __enter__(self):
        logging.info("waiting for the other workers of TF_CONFIG: %s",
                     ", ".join(f"{name} at {a}" for a, name in self._others.items()))
        program = os.path.splitext(os.path.basename(sys.argv[0] or "bert_tf"))[0]
        self._watcher = subprocess.Popen(
            [sys.executable, worker_watch.__file__, str(os.getpid()), str(self._wait_seconds),
             program, json.dumps(self._others), str(self._report_seconds)],
            stdin=subprocess.DEVNULL)
        if threading.current_thread() is threading.main_thread():
            self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_DFL)
        return self

    def __exit__(self, *exc_info):
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()
        self._watcher.kill()
        self._watcher.wait()
        return False


def _multi_worker_strategy(wait_seconds):
    if "TF_CONFIG" not in os.environ:
        logging.warning("multi_worker_mirrored without TF_CONFIG: a single worker")
        return tf.distribute.MultiWorkerMirroredStrategy()
    cluster, kind, index = check_tf_config(os.environ["TF_CONFIG"])
    others = {address: f"{job} {i}" for job in COORDINATED_JOBS
              for i, address in enumerate(cluster.get(job, ())) if (job, i) != (kind, index)}
    if not others:
        return tf.distribute.MultiWorkerMirroredStrategy()
    with WaitingForWorkers(others, wait_seconds):
        return tf.distribute.MultiWorkerMirroredStrategy()


def _refuse_cluster(name):
    """Refuses a `TF_CONFIG` cluster of several workers to a strategy that ignores it.

    Each process would train alone, without a word (workers launched with
    `TF_CONFIG` but without `--distribution_strategy=multi_worker_mirrored`).
    A `TF_CONFIG` this check cannot read is not its business.
    """
    try:
        cluster, _, _ = check_tf_config(os.environ.get("TF_CONFIG") or "{}")
    except DistributionError:
        return
    workers = sum(len(cluster.get(job, ())) for job in COORDINATED_JOBS)
    if workers > 1:
        raise DistributionError(
            f"TF_CONFIG names a cluster of {workers} workers, but --distribution_strategy="
            f"{name} trains this process alone; give --distribution_strategy="
            "multi_worker_mirrored, or unset TF_CONFIG")


def _mirrored_devices(num_gpus):
    gpus = tf.config.list_logical_devices("GPU")
    if num_gpus > len(gpus):
        raise DistributionError(f"--num_gpus={num_gpus} but this machine has {len(gpus)} GPU(s)")
    if gpus:
        return [d.name for d in gpus[:num_gpus or len(gpus)]]
    return [d.name for d in tf.config.list_logical_devices("CPU")]


def get_strategy(name, num_gpus=0, tpu=None, tpu_zone=None, gcp_project=None,
                 worker_wait_seconds=WORKER_WAIT_SECONDS, training=True):
    """Builds the strategy named by `--distribution_strategy`.

    Args:
        name: one of `STRATEGIES`.
        num_gpus: GPUs for `mirrored` (0: all of them).
        tpu, tpu_zone, gcp_project: where the TPU is, for `tpu`.
        worker_wait_seconds: how long a `multi_worker_mirrored` worker
            waits for the others to start (0: for ever).
        training: the run trains; a one-machine strategy then refuses a
            `TF_CONFIG` cluster of several workers (an evaluation or
            prediction alone, in a shell that still holds the training's
            `TF_CONFIG`, has nothing to train apart).

    Returns:
        A `tf.distribute.Strategy`.

    Raises:
        DistributionError: an unknown name, hardware that is not there, or a
            `TF_CONFIG` cluster of several workers for a one-machine strategy
            that trains.

    Example:

    >>> get_strategy("one_device").num_replicas_in_sync
    1
    """
    if training and name in ("one_device", "mirrored"):
        _refuse_cluster(name)
    if name == "one_device":
        gpus = tf.config.list_logical_devices("GPU")
        return tf.distribute.OneDeviceStrategy(gpus[0].name if gpus else "/cpu:0")
    if name == "mirrored":
        return tf.distribute.MirroredStrategy(_mirrored_devices(num_gpus))
    if name == "multi_worker_mirrored":
        return _multi_worker_strategy(worker_wait_seconds)
    if name == "tpu":  # imported here: it raises this module's DistributionError
        from bert_tf.training.tpu_strategy import tpu_strategy
        return tpu_strategy(tpu, tpu_zone, gcp_project)
    raise DistributionError(f"--distribution_strategy={name!r}: choose one of "
                            f"{', '.join(STRATEGIES)}")


def is_chief(strategy):
    """True on the one worker that writes summaries, results and exported files.

    That is every single-machine strategy, and under multi-worker training
    the `chief` task, or worker 0 when the cluster names no chief.
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return True
    if resolver.task_type == "chief":
        return True
    has_chief = "chief" in resolver.cluster_spec().as_dict()
    return resolver.task_type == "worker" and resolver.task_id == 0 and not has_chief


def in_one_process(strategy):
    """True where one process drives every replica: all but multi-worker training.

    A TPU's hosts are driven by the one process that made the strategy; a
    `MultiWorkerMirroredStrategy` without a cluster in `TF_CONFIG` is one
    worker.

    >>> in_one_process(tf.distribute.get_strategy())
    True
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or isinstance(strategy, tf.distribute.TPUStrategy):
        return True
    cluster = resolver.cluster_spec().as_dict()
    return sum(len(cluster.get(job, ())) for job in COORDINATED_JOBS) <= 1
