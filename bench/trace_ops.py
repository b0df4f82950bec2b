"""Time per op type in a TensorFlow profiler trace: TensorFlow's ops and XLA:CPU's kernels.

`op_times` reads the XPlane protobuf that `tf.profiler.experimental`
writes (the file TensorBoard's profile plugin shows) and sums the
duration of every executed op by its type, over every thread that ran
one; `profiled_op_times` records such a trace of some calls and reads it.
`bench/profile_ops.py` prints its tables from them. They live apart from
that script so that they can be imported without the script's flags.

Example:

>>> import tensorflow as tf
>>> square = tf.function(lambda x: tf.matmul(x, x), jit_compile=True)
>>> x = tf.ones([64, 64])
>>> _ = square(x)  # traced and compiled before the profile
>>> "XLA MatMul" in profiled_op_times(lambda: square(x))
True
"""

import collections
import glob
import pathlib
import tempfile

import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2

# The runtime's own events, not ops: those that hold other events (a function call, the
# executor's loop), whose counting would count their ops twice, and the executor's
# bookkeeping when an asynchronous op (an XLA function call) completes ("...::Done").
RUNTIME_EVENTS = ("Process", "Run", "Execute", "Start", "ExecuteAsyncOnStream", "Await", "Done")


def op_times(logdir):
    """{op type: milliseconds} summed over every op and XLA kernel event of the trace in `logdir`.

    An XLA:CPU kernel's event carries an `hlo_op` stat and is named after its
    HLO instruction ("add_add_fusion.3", "MatMul.60"): it counts as
    "XLA add_add_fusion". The compiled function that holds such kernels is
    left out, as every event of the runtime itself is, so nothing counts twice.
    """
    space = xplane_pb2.XSpace()
    path = glob.glob(f"{logdir}/**/*.xplane.pb", recursive=True)[0]
    space.ParseFromString(pathlib.Path(path).read_bytes())
    times = collections.Counter()
    for plane in space.planes:
        names = {key: value.name for key, value in plane.event_metadata.items()}
        hlo_stats = {key for key, value in plane.stat_metadata.items() if value.name == "hlo_op"}
        for line in plane.lines:
            for event in line.events:
                name = names.get(event.metadata_id, "")
                if any(stat.metadata_id in hlo_stats for stat in event.stats):
                    times["XLA " + name.split(".")[0]] += event.duration_ps / 1e9
                elif ":" in name and not name.startswith(("$", "end: ")):
                    op_type = name.rsplit(":", 1)[1]
                    function_call = op_type.strip().startswith("__inference")
                    if op_type not in RUNTIME_EVENTS and not function_call:
                        times[op_type] += event.duration_ps / 1e9
    return times


def profiled_op_times(call, calls=1):
    """`op_times` of a trace of `calls` calls of `call` (warm it up first)."""
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        for _ in range(calls):
            call()
        tf.profiler.experimental.stop()
        return op_times(logdir)
