"""Where the benchmarks find the real data: `../shared/data` beside the repository.

`BERT_TF_SHARED_DATA` points elsewhere, as it does for the tests.
"""

import os
import pathlib

SHARED_DATA = pathlib.Path(os.environ.get(
    "BERT_TF_SHARED_DATA", pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"))
# Pretraining records written by the original tool (118 instances of sample_text.txt).
GOLDEN_RECORDS = SHARED_DATA / "golden" / "sample_text_seed12345_dupe10.tfrecord"
