"""The PyTorch and Keras adapters the benchmarks share: a model as the flat float32
vector bench/measure.py's ``Snapshots`` keep, the accuracy of such a vector, a sum of
floats over the ranks through Horovod, and the Keras models (the mlp task's, with its
method around SGD). Each benchmark's own loop (time_to_accuracy.py, epoch_loop.py,
keras_epoch_loop.py, steps_to_accuracy.py, imbalance.py) calls these; frameworks are
started by bench/harness.py (``start_torch``, ``start_keras``).

(Not ``frameworks.py``: tests/workers/frameworks.py has that name, and
elastic_worker.py runs with tests/workers on its path.)
"""
import methods as registry


# -- PyTorch --------------------------------------------------------------------------
def torch_flatten(model):
    """(flatten, numel) of a torch model's parameters, for Snapshots."""
    import torch
    params = list(model.parameters())

    def flatten(out):
        with torch.no_grad():
            torch.cat([p.detach().reshape(-1) for p in params], out=torch.from_numpy(out))
    return flatten, sum(p.numel() for p in params)


def torch_accuracy(task, seed):
    """accuracy(flat): the task's test accuracy (%) of a fresh ``task.make_model(seed)``
    with its parameters set from the flat vector (a Snapshots row)."""
    import numpy as np
    import torch
    from torch.nn.utils import vector_to_parameters
    check = task.make_model(seed)

    def accuracy(flat):
        vector_to_parameters(torch.from_numpy(np.ascontiguousarray(flat)),
                             check.parameters())
        return task.accuracy(check)
    return accuracy


def torch_sum(hvd, values, name):
    """The list of floats ``values`` summed over the ranks (float64) by a Horovod
    allreduce named ``name``."""
    import torch
    return hvd.allreduce(torch.tensor(values, dtype=torch.float64), op=hvd.Sum,
                         name=name).tolist()


# -- Keras ----------------------------------------------------------------------------
def keras_mlp(tf, prefix, seed, inputs, layers):
    """A Keras MLP seeded with ``seed``; ``layers``: [(name suffix, units)], ReLU but
    the last. Names equal on every rank: Horovod names its collectives after them."""
    tf.keras.utils.set_random_seed(seed)
    return tf.keras.Sequential([tf.keras.layers.Input((inputs,))] + [
        tf.keras.layers.Dense(units, activation="relu" if i < len(layers) - 1 else None,
                              name=f"{prefix}_{suffix}")
        for i, (suffix, units) in enumerate(layers)], name=prefix)


def keras_mlp_and_optimizer(k, name, spec, task, seed, tau):
    """(model, registry.build_keras's (optimizer, lockstep, synced)): the mlp task's
    MLP named ``name`` (equal on every rank), rank 0's weights broadcast, and the
    method ``spec`` around SGD with the task's learning rate and momentum."""
    tf = k.tf
    model = keras_mlp(tf, name, seed, task.DIM,
                      [("h1", 128), ("h2", 128), ("out", task.num_classes)])
    k.hvd_tf.broadcast_variables(model.variables, root_rank=0)
    return model, registry.build_keras(
        spec, tf.keras.optimizers.SGD(learning_rate=task.lr, momentum=task.momentum),
        k.hvd, k.hvd_keras, tau)


def keras_flatten(k, model):
    """(flatten, numel) of a Keras model's trainable weights, for Snapshots."""
    np, weights = k.np, model.trainable_variables
    return (lambda out: np.concatenate([v.numpy().ravel() for v in weights], out=out),
            sum(int(np.prod(v.shape)) for v in weights))


def keras_accuracy(k, model, task):
    """accuracy(flat): the test accuracy (%) of ``model`` with its trainable weights
    set from the flat vector (a Snapshots row)."""
    np, weights = k.np, model.trainable_variables
    sizes = [int(np.prod(v.shape)) for v in weights]
    x_test, y_test = task.x_test.numpy(), np.asarray(task.y_test)

    def accuracy(flat):
        for v, part in zip(weights, np.split(flat, np.cumsum(sizes)[:-1])):
            v.assign(part.reshape(v.shape))
        pred = np.argmax(model(x_test, training=False).numpy(), 1)
        return 100.0 * float(np.mean(pred == y_test))
    return accuracy


def keras_sum(tf, hvd_tf, values, name):
    """The list of floats ``values`` summed over the ranks (float64) by a Horovod
    TensorFlow allreduce named ``name`` (eager)."""
    return hvd_tf.allreduce(tf.constant(values, tf.float64), op=hvd_tf.Sum,
                            name=name).numpy().tolist()
