"""bench/trace_ops.py reading real profiler traces: TensorFlow's ops and XLA:CPU's kernels."""

import doctest

import tensorflow as tf

import trace_ops


def op_times_of(function, inputs):
    """`trace_ops.op_times` of one call of `function`, traced and compiled beforehand."""
    function(inputs)
    return trace_ops.profiled_op_times(lambda: function(inputs))


def matmul_relu(inputs):
    return tf.nn.relu(tf.matmul(inputs, inputs)) * 2.0 + 1.0


def test_compiled_work_counts_as_its_kernels_and_the_function_not_again():
    inputs = tf.random.normal([256, 256], seed=1)
    compiled = tf.function(matmul_relu, jit_compile=True, autograph=False)
    times = op_times_of(compiled, inputs)
    assert "XLA MatMul" in times, times  # the dot, named after the TensorFlow op it came from
    assert any(name.startswith("XLA ") and name.endswith("fusion") for name in times), times
    # The compiled function holds those kernels: counting it too would count them twice.
    assert not [name for name in times if "__inference" in name], times


def test_graph_calling_a_compiled_function_counts_both_and_no_runtime_events():
    """As CPU inference runs: TensorFlow's matmul, then an XLA-compiled element-wise pass."""
    inputs = tf.random.normal([256, 256], seed=1)
    elementwise = tf.function(lambda x: tf.nn.relu(x) * 2.0 + 1.0, jit_compile=True,
                              autograph=False)
    mixed = tf.function(lambda x: elementwise(tf.matmul(x, x)), autograph=False)
    times = op_times_of(mixed, inputs)
    assert any("MatMul" in name and not name.startswith("XLA ") for name in times), times
    assert any(name.startswith("XLA ") and name.endswith("fusion") for name in times), times
    assert not [name for name in times if "__inference" in name or name == "Done"], times


def test_plain_graph_counts_tensorflow_ops_only():
    inputs = tf.random.normal([256, 256], seed=1)
    plain = tf.function(matmul_relu, autograph=False)
    times = op_times_of(plain, inputs)
    assert any("MatMul" in name for name in times), times
    assert not [name for name in times if name.startswith("XLA ")], times


def test_docstring_example_runs():
    assert doctest.testmod(trace_ops).failed == 0
