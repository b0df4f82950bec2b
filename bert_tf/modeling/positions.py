"""Each example's rows at its own positions: the one gather of the models; the last real token."""

from keras import ops


def gather_positions(sequence, positions):
    """`sequence[b, positions[b, q]]` for every example `b` and query `q`.

    The masked-LM head reads the states at the masked positions this way,
    and the encoder's last block computes only those rows
    (`BertEncoder.encode_at`).

    Args:
        sequence: `[B, T, ...]`.
        positions: `[B, Q]` integer indices into `T`.

    Returns:
        `[B, Q, ...]`.

    Example:

    >>> import numpy as np
    >>> sequence = np.arange(12, dtype="float32").reshape(2, 3, 2)
    >>> ops.convert_to_numpy(gather_positions(sequence, np.array([[2, 0], [1, 1]]))).tolist()
    [[[4.0, 5.0], [0.0, 1.0]], [[8.0, 9.0], [8.0, 9.0]]]
    """
    index = ops.cast(positions, "int32")
    for _ in range(len(sequence.shape) - 2):
        index = ops.expand_dims(index, -1)
    return ops.take_along_axis(sequence, index, axis=1)


def last_real_token(sequence, input_mask):
    """`[B, ...]`: each example's row at its last real position, the one before the padding.

    Left to right, that is the one position that has seen the whole text (a
    causal encoder's summary, `encoder.summary_vector`); a forward LSTM's
    final state is its output there (`bilstm.final_states`). An example
    without a real token gives its first row.

    >>> import numpy as np
    >>> sequence = np.arange(8, dtype="float32").reshape(2, 4, 1)
    >>> mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], "int32")
    >>> ops.convert_to_numpy(last_real_token(sequence, mask)).tolist()
    [[2.0], [7.0]]
    """
    last = ops.sum(ops.cast(input_mask, "int32"), axis=1, keepdims=True) - 1
    return gather_positions(sequence, ops.maximum(last, 0))[:, 0]
