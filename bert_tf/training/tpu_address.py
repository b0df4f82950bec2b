"""Where `--tpu` points, and whether a TPU's gRPC server can be there, found in seconds.

TensorFlow connects to a TPU worker over gRPC and waits, without a word,
for ever or for minutes, where the address is wrong: nothing listening
(Linux refuses at once, but a firewall drops the connection), or
something else listening that never speaks gRPC (a web server, a wrong
port on the right host). `check_address` tries it first, within
`TPU_ANSWER_SECONDS` for each step: that a connection is accepted
(`worker_watch.unreachable`: refused, does not resolve, no answer), and,
for an address the user gave (`grpc://host:port`, or a bare `host:port`),
that a gRPC server answers there, i.e. completes gRPC's HTTP/2 handshake
(`grpc`, a dependency of TensorFlow). The address a Cloud TPU name
resolves to, which the Cloud TPU API gives as a TPU worker's, is only
tried for a connection.
"""

from bert_tf.training import worker_watch
from bert_tf.training.distribution import DistributionError

TPU_ANSWER_SECONDS = 5.0  # how long a TPU's address may take to accept, then to answer gRPC


def grpc_target(tpu):
    """`tpu` as TensorFlow's resolver reads an address: a bare "host:port" gets its grpc://.

    The resolver would take a bare address for the name of a Cloud TPU
    (which holds no ":") and look it up in the Cloud TPU API.

    >>> grpc_target("10.0.0.2:8470"), grpc_target("grpc://10.0.0.2:8470"), grpc_target("my-tpu")
    ('grpc://10.0.0.2:8470', 'grpc://10.0.0.2:8470', 'my-tpu')
    """
    return f"grpc://{tpu}" if ":" in tpu and "://" not in tpu else tpu


def answers_grpc(address, timeout):
    """Whether a gRPC server at `address` ("host:port") completes the handshake within `timeout` s.

    The channel is ready only once the server has answered HTTP/2's
    connection preface with its own settings: a listener that says
    nothing, or an HTTP/1 server, never makes it ready.
    """
    import grpc  # here: only a TPU address needs it, and it starts threads
    channel = grpc.insecure_channel(address)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
        return True
    except grpc.FutureTimeoutError:
        return False
    finally:
        channel.close()


def check_address(tpu, address, speaks_grpc):
    """Raises `DistributionError` naming `--tpu` unless a TPU worker can be at `address`.

    Args:
        tpu: the `--tpu` value, for the message.
        address: "host:port" of the TPU worker that TensorFlow will connect to.
        speaks_grpc: also require the gRPC handshake (an address the user
            gave, not one a Cloud TPU name resolved to).
    """
    why = worker_watch.unreachable(address, timeout=TPU_ANSWER_SECONDS)
    if why is None and speaks_grpc and not answers_grpc(address, TPU_ANSWER_SECONDS):
        why = (f"accepts connections but did not answer as a gRPC server within "
               f"{TPU_ANSWER_SECONDS:g} s (a TPU worker's port is usually 8470)")
    if why is not None:
        raise DistributionError(f"--tpu={tpu}: {address} {why}; check the TPU's address "
                                "and that it is running")
