"""The `tpu` strategy: a Cloud TPU by name or `grpc://` address, or a TPU VM's own chips.

Where no TPU can be reached, TensorFlow's own failures say little: a
resolver error from deep in the Cloud client, an `UnimplementedError`
traceback from an address that answers as something else, or, from an
address where nothing listens, a wait for ever without a word. Each is one
`DistributionError` here, naming `--tpu`: no TPU on this machine and none
named; a name that does not resolve; nothing answering at the address
within `TPU_ANSWER_SECONDS`; an answer from no TPU worker.
"""

import os

import tensorflow as tf

from bert_tf.training import worker_watch
from bert_tf.training.distribution import DistributionError

TPU_ANSWER_SECONDS = 10.0  # how long a TPU's address may take to accept a connection


def _tpu_resolver(tpu, zone, project):
    """The resolver of the TPU `tpu` names, once something answers at its address."""
    tpu = tpu or os.environ.get("TPU_NAME", "")
    if tpu in ("", "local") and not tf.config.list_physical_devices("TPU"):
        raise DistributionError(
            "--distribution_strategy=tpu: no TPU here. Name a Cloud TPU with --tpu "
            "(or --tpu_name), e.g. --tpu=my-tpu or --tpu=grpc://10.0.0.2:8470, or run on a "
            "TPU VM; use --distribution_strategy=one_device|mirrored otherwise.")
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=tpu or "local", zone=zone, project=project)
    except Exception as e:  # the resolver raises URLError, ValueError, HttpError...
        raise DistributionError(f"--tpu={tpu}: cannot resolve this TPU ({e})") from e
    # TensorFlow would wait for ever, without a word, on an address where nothing listens.
    address = resolver.master().partition("grpc://")[2]
    if address and not worker_watch.answers(address, timeout=TPU_ANSWER_SECONDS):
        raise DistributionError(f"--tpu={tpu}: nothing answers at {address} within "
                                f"{TPU_ANSWER_SECONDS:.0f} s; check the TPU's address and that "
                                "it is running")
    return resolver


def tpu_strategy(tpu, zone, project):
    """The `TPUStrategy` of the TPU `tpu` names (`--tpu`; None or "local": this VM's).

    Raises:
        DistributionError: no TPU here, a name that does not resolve, an
            address where nothing answers, or one that answers as no TPU.
    """
    resolver = _tpu_resolver(tpu, zone, project)
    try:
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except tf.errors.OpError as e:  # something answers there, but not a TPU worker
        first_line = e.message.strip().splitlines()[0] if e.message.strip() else type(e).__name__
        raise DistributionError(f"--tpu={tpu}: cannot connect to this TPU ({first_line})") from e
    return tf.distribute.TPUStrategy(resolver)
