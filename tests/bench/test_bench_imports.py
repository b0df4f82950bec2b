"""Every bench script times the checkout it is run from, not an installed copy of bert_tf.

`python bench/x.py` puts `bench/` first on the import path, not the
repository: without the repository first, `import bert_tf` found whatever
copy pip had installed (an editable install of another checkout, or an
older release), and the table timed that code.
"""

from tests_shared import REPO

# The spellings of "the repository first" in the benches (REPO: the script's folder's parent).
REPOSITORY_FIRST = ("sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))",
                    "sys.path.insert(0, str(REPO))", "sys.path[:0] = [str(REPO)")


def test_every_bench_script_that_imports_bert_tf_puts_the_repository_first():
    scripts = [path for path in sorted((REPO / "bench").glob("*.py"))
               if '__name__ == "__main__"' in path.read_text() and "bert_tf" in path.read_text()]
    assert len(scripts) > 10
    assert [path.name for path in scripts
            if not any(line in path.read_text() for line in REPOSITORY_FIRST)] == []
