"""Checking that TFRecord files are whole before a long run reads them.

A TFRecord file is a sequence of records, each framed as an 8-byte
little-endian length, a 4-byte checksum of the length, the payload and a
4-byte checksum of the payload. A copy cut short (an interrupted upload, a
full disk) loses the end of its last record; TensorFlow then fails hours
into training with a `DataLossError` that names no file. Walking the frames
reads 12 bytes per record and seeks over the payloads, so every input file
can be checked in seconds before training starts.
"""

import os
import struct

_HEADER = 12  # length (8) + length checksum (4)
_FOOTER = 4  # payload checksum


def count_framed_records(path):
    """The number of records in a local TFRecord file whose frames are all whole.

    Raises:
        ValueError: naming the file and byte offset where a record is cut short.

    Example:

    >>> import os, tempfile, tensorflow as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     for payload in (b"first", b"second"):
    ...         writer.write(payload)
    >>> count_framed_records(path)
    2
    >>> with open(path, "r+b") as f:
    ...     _ = f.truncate(os.path.getsize(path) - 3)
    >>> count_framed_records(path)
    Traceback (most recent call last):
    ValueError: ...a.tfrecord: TFRecord file cut short: record 2 at byte 21 needs 22 bytes, 19 are left (an interrupted copy, or not a TFRecord file?)
    """
    size = os.path.getsize(path)
    offset = count = 0
    with open(path, "rb") as f:
        while offset < size:
            header = f.read(_HEADER)
            if len(header) < _HEADER:
                needed = _HEADER
            else:
                (length,) = struct.unpack("<Q", header[:8])
                needed = _HEADER + length + _FOOTER
            if offset + needed > size:
                raise ValueError(f"{path}: TFRecord file cut short: record {count + 1} at byte "
                                 f"{offset} needs {needed} bytes, {size - offset} are left "
                                 "(an interrupted copy, or not a TFRecord file?)")
            offset += needed
            count += 1
            f.seek(offset)
    return count
