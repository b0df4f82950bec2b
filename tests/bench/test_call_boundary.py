"""bench/call_boundary.py's runs train what they say, in the calls they say."""

import pytest

from step_runners import pretraining_batch
from tests_shared import load_bench, steps_per_call


@pytest.fixture(scope="module")
def bench():
    return load_bench("call_boundary")


def test_each_run_trains_its_steps_more_in_calls_of_the_size_asked(bench):
    trainer, run = bench.trainer_run(steps=4, steps_per_call=2, batch=pretraining_batch(2))
    sizes = steps_per_call(trainer)
    results = [run(), run()]
    assert int(trainer.global_step.numpy()) == 8 and sizes == [2, 2, 2, 2]
    assert all(result["loss"] > 0 for result in results)
