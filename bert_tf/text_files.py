"""Reading a user's text file as UTF-8 lines, and CSV/TSV rows, naming the line of bad bytes.

Every reader of a text file a user gives (GLUE and own TSV files,
`labels.txt`, SWAG's CSV, CoNLL, `vocab.txt`, extract_features' input) goes
through `utf8_lines`, so they agree on what the file's text is (pretraining
corpora split their lines with `byte_lines` too, but drop undecodable bytes
with a warning, as the original's data tool goes on):

* UTF-8; a byte-order mark at the start is dropped (Windows editors write
  one), instead of gluing itself to the first field, label or token;
* lines end at "\\n" only, and keep every "\\r" (`tf.io.gfile`'s own line
  reading, the original's, deletes them); `csv_rows` refuses a lone "\\r"
  outside quotes rather than guess where the row ends;
* bytes that are not UTF-8 fail with the file and line, not with a byte
  offset into some read buffer.

Files are read through `tf.io.gfile` (a URL reads where its caller accepts
one); a folder or an unreadable file is an `OSError` naming it.
"""

import csv

import tensorflow as tf

# Bytes read at a time (`tf.io.gfile` reads URLs, too, but its lines lose their "\r").
_CHUNK_BYTES = 1 << 20
# GLUE texts (and SWAG's) may be longer than the csv module's default 128 KiB field
# limit; this is the largest a C long holds on every platform.
_CSV_FIELD_LIMIT = 2**31 - 1


class NotUtf8Error(ValueError):
    """Bytes that are not UTF-8; the message names the file and line."""


def utf8_lines(path):
    """Yields the lines of a UTF-8 text file, each with its "\\n" (a first-line BOM dropped).

    Raises:
        NotUtf8Error: naming the file and line of bytes that are not UTF-8.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.txt")
    >>> _ = open(path, "wb").write(b"\\xef\\xbb\\xbfneg\\r\\npos\\ncaf\\xe9\\n")
    >>> lines = utf8_lines(path)
    >>> next(lines), next(lines)
    ('neg\\r\\n', 'pos\\n')
    >>> next(lines)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    bert_tf.text_files.NotUtf8Error: .../labels.txt:3: not UTF-8 ('utf-8' codec can't decode byte 0xe9 in position 3: invalid continuation byte); save the file as UTF-8
    """
    for number, raw in enumerate(byte_lines(path), start=1):
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as error:
            raise NotUtf8Error(f"{path}:{number}: not UTF-8 ({error}); save the file "
                               "as UTF-8") from None


def byte_lines(path):
    """Yields the lines of a file as bytes, each with its "\\n" (the last may lack one).

    A line longer than a read is gathered in pieces, so its cost stays
    linear in its length.

    Raises:
        OSError: naming the file, where it cannot be read (a folder, say).
    """
    unfinished = []  # the pieces of a line that no read has ended yet
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            while chunk := f.read(_CHUNK_BYTES):
                *lines, rest = chunk.split(b"\n")
                if lines:
                    lines[0] = b"".join(unfinished) + lines[0]
                    unfinished = []
                    for line in lines:
                        yield line + b"\n"
                unfinished.append(rest)
    except tf.errors.OpError as error:
        raise OSError(f"{path}: cannot be read ({error.message})") from None
    if any(unfinished):
        yield b"".join(unfinished)


def csv_rows(path, **options):
    """Yields `(line number, fields)` of each row of a CSV or TSV file read by `utf8_lines`.

    The number is that of the row's first line (a quoted field may span
    lines). `options` are `csv.reader`'s (`delimiter`, `quoting`, ...).

    Raises:
        NotUtf8Error: as `utf8_lines`.
        ValueError: naming the file and line of a row the csv module cannot
            read, such as a carriage return inside an unquoted field (an
            editor's line break that is not one here: rows end at "\\n").

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.tsv")
    >>> _ = open(path, "w", newline="").write("a\\tb\\r\\nc\\rd\\te\\n")
    >>> rows = csv_rows(path, delimiter="\\t")
    >>> next(rows)
    (1, ['a', 'b'])
    >>> next(rows)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: .../train.tsv:2: a carriage return (\\r) inside a field; rows end only at a line feed (\\n), so remove the \\r or quote the field
    """
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(_CSV_FIELD_LIMIT)
    reader = csv.reader(utf8_lines(path), **options)
    first_line = 1
    try:
        for row in reader:
            yield first_line, row
            first_line = reader.line_num + 1
    except csv.Error as error:
        # Lines end at "\n", so the only new-line character the reader can
        # find inside an unquoted field is a "\r".
        reason = ("a carriage return (\\r) inside a field; rows end only at a line feed "
                  "(\\n), so remove the \\r or quote the field"
                  if "new-line character" in str(error) else str(error))
        raise ValueError(f"{path}:{reader.line_num}: {reason}") from None
