"""Quasi-global momentum (QGM; Lin, Kong, Stich, Jaggi, ICML 2021, "Quasi-Global
Momentum: Accelerating Decentralized Deep Learning on Heterogeneous Data"):
``average_optimizer_state="quasi_global"``. The frameworks' implementations are
horovod_wagma/torch/quasi_global_momentum.py and
horovod_wagma/keras/quasi_global_momentum.py; this module holds the rule and the
check they share.

Local momentum drifts apart on heterogeneous (non-IID) data: each rank's buffer
follows its own gradients. QGM rebuilds the buffer from the model's change across
the whole step, averaging included, so it tracks the direction the *averaged* models
move in, at zero extra traffic (no optimizer state is ever sent). Per parameter x
with momentum beta > 0 and learning rate lr (torch units: the buffer m multiplies
-lr; Keras units: the velocity v = -lr * m):

    x_half = SGD-with-momentum step of x, using the buffer m_old     (as usual)
    x_new  = WAGMA average of x_half over this round's group         (as usual)
    d      = (x - x_new) / lr              (torch: buffer units)
    m      = beta * m_old + (1 - beta) * d                           (replaces m)
    v      = beta * v_old + (1 - beta) * (x_new - x)                 (Keras: same rule)

In the PyTorch optimizer the rebuilt buffers are also averaged at global rounds (the
"on_sync" traffic, 1/tau of the model's): a global round pulls every rank to the same
model, and without it each rank's own share of that pull would live on in its
momentum and push the ranks apart again right after the exact average (measured in
bench/time_to_accuracy.py's exploration, mlp IID: 73-75% final accuracy instead of
86%). The Keras optimizer has no global-round state averaging yet.

Learning rates carry over from heavy-ball momentum: with a constant gradient g and
no averaging, torch's step gives x - x_new = lr * (beta * m + g), so the fixed point
of m = beta * m + (1 - beta) * (beta * m + g) is (1 - beta)^2 m = (1 - beta) g, i.e.
m = g / (1 - beta), the heavy-ball buffer's fixed point (m = beta * m + g). In Keras
units x_new - x = beta * v - lr * g gives v = -lr * g / (1 - beta), Keras's own.
"""

MODE = "quasi_global"


def check_momentum_sgd(optimizer_name, is_sgd, momenta, sgd_name, alternatives):
    """Raises ValueError unless the optimizer is ``sgd_name`` with momentum > 0 (in
    every parameter group: ``momenta``). Local, so every rank raises it alike."""
    momenta = list(momenta)
    if is_sgd and momenta and all(float(m) > 0 for m in momenta):
        return
    got = (f"{optimizer_name} with momentum={min(float(m) for m in momenta)}"
           if is_sgd and momenta else optimizer_name)
    raise ValueError(f"average_optimizer_state='{MODE}' needs {sgd_name} with momentum > 0; "
                     f"got {got}; use {alternatives}")
