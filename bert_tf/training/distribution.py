"""The `tf.distribute` strategy a run asks for, who its chief is, and how many processes.

`--distribution_strategy` picks one of:

* `one_device`: the first GPU, else the CPU;
* `mirrored`: data-parallel over `--num_gpus` GPUs of this machine (all GPUs
  when 0); on a machine without GPUs, over its logical CPU devices (which
  is how the tests exercise it);
* `multi_worker_mirrored`: data-parallel over several machines (or
  processes), each one described by the `TF_CONFIG` environment variable;
* `tpu`: a Cloud TPU (`--tpu`, the original's `--tpu_name`, a `grpc://`
  address, or the TPU VM's own chips). Without a TPU it fails at once with a
  message rather than waiting on a network that is not there.
"""

import json
import os

import tensorflow as tf
from absl import logging

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")


class DistributionError(ValueError):
    """A strategy that cannot be built on this machine."""


def _mirrored_devices(num_gpus):
    gpus = tf.config.list_logical_devices("GPU")
    if num_gpus > len(gpus):
        raise DistributionError(f"--num_gpus={num_gpus} but this machine has {len(gpus)} GPU(s)")
    if gpus:
        return [d.name for d in gpus[:num_gpus or len(gpus)]]
    return [d.name for d in tf.config.list_logical_devices("CPU")]


def _tpu_resolver(tpu, zone, project):
    tpu = tpu or os.environ.get("TPU_NAME", "")
    if tpu in ("", "local") and not tf.config.list_physical_devices("TPU"):
        raise DistributionError(
            "--distribution_strategy=tpu: no TPU here. Name a Cloud TPU with --tpu "
            "(or --tpu_name), e.g. --tpu=my-tpu or --tpu=grpc://10.0.0.2:8470, or run on a "
            "TPU VM; use --distribution_strategy=one_device|mirrored otherwise.")
    try:
        return tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=tpu or "local", zone=zone, project=project)
    except Exception as e:  # the resolver raises URLError, ValueError, HttpError...
        raise DistributionError(f"--tpu={tpu}: cannot resolve this TPU ({e})") from e


def get_strategy(name, num_gpus=0, tpu=None, tpu_zone=None, gcp_project=None):
    """Builds the strategy named by `--distribution_strategy`.

    Args:
        name: one of `STRATEGIES`.
        num_gpus: GPUs for `mirrored` (0: all of them).
        tpu, tpu_zone, gcp_project: where the TPU is, for `tpu`.

    Returns:
        A `tf.distribute.Strategy`.

    Raises:
        DistributionError: an unknown name, or hardware that is not there.

    Example:

    >>> get_strategy("one_device").num_replicas_in_sync
    1
    """
    if name == "one_device":
        gpus = tf.config.list_logical_devices("GPU")
        return tf.distribute.OneDeviceStrategy(gpus[0].name if gpus else "/cpu:0")
    if name == "mirrored":
        return tf.distribute.MirroredStrategy(_mirrored_devices(num_gpus))
    if name == "multi_worker_mirrored":
        if "TF_CONFIG" not in os.environ:
            logging.warning("multi_worker_mirrored without TF_CONFIG: a single worker")
        else:
            try:
                json.loads(os.environ["TF_CONFIG"])
            except json.JSONDecodeError as e:
                raise DistributionError(f"TF_CONFIG is not valid JSON ({e})") from e
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "tpu":
        resolver = _tpu_resolver(tpu, tpu_zone, gcp_project)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
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
    return sum(len(cluster.get(job, ())) for job in ("chief", "worker")) <= 1
