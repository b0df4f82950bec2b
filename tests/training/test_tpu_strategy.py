"""The `tpu` strategy where no TPU is: no TPU here, a name or address that leads nowhere, and
real servers that are no TPU worker (a silent TCP listener, an HTTP/1 server, gRPC servers)."""

import contextlib
import http.server
import re
import socket
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc
import pytest
import tensorflow as tf

from bert_tf.training import tpu_address
from bert_tf.training.distribution import DistributionError, get_strategy
from tests_shared import free_ports
from training.pretraining_runs import environment


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # gRPC's "PRI * HTTP/2.0" preface would be logged
        pass


@contextlib.contextmanager
def _server(kind):
    """A real server of `kind` on a free localhost port: its "host:port".

    "silent" accepts connections (the kernel does, for a listening socket)
    and says nothing; "http" is an HTTP/1 server; "grpc" a gRPC server
    without services.
    """
    if kind == "silent":
        with socket.create_server(("127.0.0.1", 0)) as listener:
            yield f"127.0.0.1:{listener.getsockname()[1]}"
    elif kind == "http":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuietHandler)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield f"127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
    else:
        server = grpc.server(futures.ThreadPoolExecutor(1))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            yield f"127.0.0.1:{port}"
        finally:
            server.stop(0)


def test_tpu_without_a_tpu_fails_at_once():
    start = time.time()
    with pytest.raises(DistributionError, match="no TPU here.*--tpu"):
        get_strategy("tpu")
    with pytest.raises(DistributionError, match="--tpu=no-such-tpu-name: cannot resolve"):
        get_strategy("tpu", tpu="no-such-tpu-name")
    assert time.time() - start < 10


@pytest.mark.parametrize("kind, given", [("silent", "grpc://{}"), ("http", "{}")])
def test_a_tpu_address_where_no_grpc_server_answers_fails_in_seconds(monkeypatch, kind, given):
    """TensorFlow waited without a word, for ever (or for minutes), to connect to a server
    that accepts connections but never speaks gRPC; a bare host:port is an address too."""
    monkeypatch.setattr(tpu_address, "TPU_ANSWER_SECONDS", 0.5)
    with _server(kind) as address:
        tpu = given.format(address)
        start = time.time()
        with pytest.raises(DistributionError) as failure:
            get_strategy("tpu", tpu=tpu)
        assert time.time() - start < 3
    assert str(failure.value) == (
        f"--tpu={tpu}: {address} accepts connections but did not answer as a gRPC server "
        "within 0.5 s (a TPU worker's port is usually 8470); check the TPU's address and that "
        "it is running")


def test_a_tpu_address_that_takes_no_connection_says_why(monkeypatch):
    """Refused, unresolvable, or dropped (a listener whose queue is full drops new connections,
    as a firewall does): each said so in seconds."""
    monkeypatch.setattr(tpu_address, "TPU_ANSWER_SECONDS", 0.3)
    port = free_ports(1)[0]
    with socket.create_server(("127.0.0.1", 0), backlog=0) as full, socket.socket() as held:
        held.connect(full.getsockname())  # the one connection its queue holds
        dropping = f"127.0.0.1:{full.getsockname()[1]}"
        for tpu, found in [
                (f"grpc://127.0.0.1:{port}", f"127.0.0.1:{port} refused the connection"),
                ("no-such-host.invalid:8470", "no-such-host.invalid:8470 does not resolve ("),
                (dropping, f"{dropping} did not accept a connection within 0.3 s")]:
            start = time.time()
            with pytest.raises(DistributionError) as failure:
                get_strategy("tpu", tpu=tpu)
            assert str(failure.value).startswith(f"--tpu={tpu}: {found}"), failure.value
            assert str(failure.value).endswith(
                "; check the TPU's address and that it is running")
            assert time.time() - start < 3


def test_a_grpc_server_passes_the_address_check():
    """And only a user's address must speak gRPC: a Cloud TPU name's is only connected to."""
    with _server("grpc") as address:
        tpu_address.check_address(f"grpc://{address}", address, speaks_grpc=True)
    with _server("silent") as address:
        tpu_address.check_address("my-tpu", address, speaks_grpc=False)


def test_a_grpc_server_that_is_no_tpu_worker_is_named_in_one_line():
    """Past the address check, TensorFlow's connect to a real gRPC server without TensorFlow's
    services, then to a real TensorFlow worker without TPUs (a process of its own: connecting
    changes TensorFlow's context for good)."""
    worker_address = f"localhost:{free_ports(1)[0]}"
    code = """
import sys
from concurrent import futures
import grpc, tensorflow as tf
from bert_tf.training.distribution import DistributionError, get_strategy
plain = grpc.server(futures.ThreadPoolExecutor(1))
plain_address = f"127.0.0.1:{plain.add_insecure_port('127.0.0.1:0')}"
plain.start()
worker_address = sys.argv[1]
tf.distribute.Server(tf.train.ClusterSpec({"worker": [worker_address]}), job_name="worker",
                     task_index=0, start=True)
for tpu in (f"grpc://{plain_address}", worker_address):
    try:
        get_strategy("tpu", tpu=tpu)
    except DistributionError as e:
        print(e)
"""
    result = subprocess.run([sys.executable, "-c", code, worker_address], capture_output=True,
                            text=True, timeout=120, env=environment())
    assert result.returncode == 0, result.stderr[-2000:]
    plain, worker = result.stdout.splitlines()
    assert re.fullmatch(r"--tpu=grpc://127.0.0.1:\d+: cannot connect to this TPU "
                        r"\(Method not found!\)", plain), plain
    assert worker.startswith(f"--tpu={worker_address}: cannot connect to this TPU (TPUs not "
                             "found in the cluster. Failed in initialization: "), worker

