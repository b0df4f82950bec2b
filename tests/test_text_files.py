"""text_files: lines split exactly however the reads fall, and unreadable paths named."""

import pytest

from bert_tf import text_files


@pytest.mark.parametrize("content", [
    b"",
    b"one line, no newline",
    b"a\nb\n\nc",
    b"x" * (3 * text_files._CHUNK_BYTES + 5) + b"\nshort\n",  # a line over several reads
    b"y" * (text_files._CHUNK_BYTES - 1) + b"\n" + b"z" * text_files._CHUNK_BYTES + b"\n",
])
def test_byte_lines_are_the_files_lines(tmp_path, content):
    path = tmp_path / "text.txt"
    path.write_bytes(content)
    lines = list(text_files.byte_lines(str(path)))
    assert b"".join(lines) == content
    assert lines == content.splitlines(keepends=True)


def test_a_folder_is_an_os_error_naming_it(tmp_path):
    with pytest.raises(OSError, match=f"{tmp_path}: cannot be read"):
        list(text_files.utf8_lines(str(tmp_path)))
