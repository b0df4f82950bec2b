"""The training loop traces its graphs once: no retracing as steps, calls and periods change.

A retrace costs seconds (minutes with XLA) and usually means a Python value
or a new shape leaked into a `tf.function`'s signature, so the count is
pinned here. `train` runs calls of different lengths (`steps_per_execution`
3, cut short by the checkpoint period and the end), which must all reuse the
one trace of `train_steps` (the step count is a tensor).
"""

from training.tiny_training import dataset_fn, make_trainer


def test_train_and_evaluate_trace_once_each(tmp_path):
    trainer = make_trainer(tmp_path, steps_per_execution=3, save_checkpoints_steps=5)
    trainer.train(dataset_fn(), num_steps=7)  # calls of 3, 2 (checkpoint at 5), then 2
    trainer.train(dataset_fn(), num_steps=11)  # a second train call, a new iterator
    trainer.evaluate(dataset_fn(repeat=False))
    trainer.evaluate(dataset_fn(repeat=False), max_steps=2)

    assert int(trainer.global_step.numpy()) == 11
    assert trainer.train_steps.experimental_get_tracing_count() == 1
    assert trainer._eval_step.experimental_get_tracing_count() == 1
    assert trainer.steps._loss_and_grads.experimental_get_tracing_count() == 1
