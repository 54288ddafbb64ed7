"""The check of Horovod's ``named_parameters`` argument for the PyTorch optimizer.

WAGMA does not use the names (streams are named by creation order and buffer), but
Horovod scripts pass them, and Horovod refuses lists it could not name its allreduces
from; so does this, with the same rules.
"""


def check_named_parameters(named_parameters, params):
    """ValueError unless ``named_parameters`` is None or unique (name, parameter)
    pairs that cover every parameter in ``params``."""
    if named_parameters is None:
        return
    named = list(named_parameters)
    if any(not isinstance(p, tuple) or len(p) != 2 for p in named):
        raise ValueError("named_parameters should be a sequence of (name, parameter) "
                         "tuples, usually model.named_parameters()")
    names = [k for k, _ in named]
    dups = sorted({k for k in names if names.count(k) > 1})
    if dups:
        raise ValueError(f"parameter names in named_parameters must be unique; "
                         f"duplicates: {', '.join(dups)}")
    named_ids = {id(v) for _, v in named}
    if any(id(p) not in named_ids for p in params):
        raise ValueError("named_parameters was given, but some optimizer parameters "
                         "are not in it")
