"""The `tpu` strategy: a Cloud TPU by name or `grpc://` address, or a TPU VM's own chips.

Where no TPU can be reached, TensorFlow's own failures say little: a
resolver error from deep in the Cloud client, an `UnimplementedError`
traceback from a gRPC server that is no TPU worker, or, from an address
where nothing or no gRPC server listens, a wait for ever without a word.
Each is one `DistributionError` here, naming `--tpu`: no TPU on this
machine and none named; a name that does not resolve; an address that
cannot be a TPU worker's (`tpu_address.check_address`, in seconds); an
answer from no TPU worker.
"""

import os

import tensorflow as tf

from bert_tf.training.distribution import DistributionError
from bert_tf.training.tpu_address import check_address, grpc_target


def _tpu_resolver(tpu, zone, project):
    """The resolver of the TPU `tpu` names, once something answers at its address."""
    tpu = tpu or os.environ.get("TPU_NAME", "")
    if tpu in ("", "local") and not tf.config.list_physical_devices("TPU"):
        raise DistributionError(
            "--distribution_strategy=tpu: no TPU here. Name a Cloud TPU with --tpu "
            "(or --tpu_name), e.g. --tpu=my-tpu or --tpu=grpc://10.0.0.2:8470, or run on a "
            "TPU VM; use --distribution_strategy=one_device|mirrored otherwise.")
    target = grpc_target(tpu or "local")
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=target, zone=zone, project=project)
    except Exception as e:  # the resolver raises URLError, ValueError, HttpError...
        raise DistributionError(f"--tpu={tpu}: cannot resolve this TPU ({e})") from e
    # TensorFlow would wait for ever, without a word, where no TPU worker's server listens.
    address = resolver.master().partition("grpc://")[2]
    if address:
        check_address(tpu, address, speaks_grpc=target.startswith("grpc://"))
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
