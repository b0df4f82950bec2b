"""The original's fine-tuning recipe on PyTorch, for the HF side of the fine-tuning benches.

AdamW with decoupled weight decay 0.01 (none on LayerNorm and bias
parameters), epsilon 1e-6, a linear warmup over the first 10% of the steps
then linear decay to 0, gradients clipped to global norm 1.0: what
`bert_tf.training.optimization` gives our side, so the benches compare
implementations, not recipes.
"""

import time

import peers

with peers.needed():
    import torch
    import transformers


def adamw(model, learning_rate, fused=None):
    """`torch.optim.AdamW` over `model` with the original's decay groups and epsilon.

    `fused`: PyTorch's one-kernel AdamW (CUDA), None for its default.
    """
    no_decay = [p for n, p in model.named_parameters() if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in model.named_parameters() if not any(p is q for q in no_decay)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=learning_rate, eps=1e-6, fused=fused)


def update(model, optimizer, loss, scaler=None):
    """One optimizer step from `loss`: backward, clip to global norm 1.0, step. Returns the loss.

    `scaler`: a `torch.amp.GradScaler` for float16 (dynamic loss scaling);
    the gradients are unscaled before clipping.
    """
    if scaler is None:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    else:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    optimizer.zero_grad()
    return loss.item()


def train(model, step_loss, steps, learning_rate):
    """Runs `steps` optimizer steps; `step_loss(step)` is that step's loss. Returns seconds.

    The model is in training mode (dropout on) while it trains, in
    evaluation mode afterwards.
    """
    optimizer = adamw(model, learning_rate)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, int(0.1 * steps), steps)
    start = time.time()
    model.train()
    for step in range(steps):
        update(model, optimizer, step_loss(step))
        schedule.step()
    seconds = time.time() - start
    model.eval()
    return seconds
