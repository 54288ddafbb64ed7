"""The class of a DistributedWagmaOptimizer, built at wrap time.

As Horovod's ``_keras`` factory does, the class is made from the user's optimizer's
own class, so ``isinstance`` checks, the class name and the wrapped algorithm stay
the user's. The framework's mixin supplies the methods, which reach the wrapped
class's through ``super(self.__class__, self)``.
"""


def wrapped_class(optimizer, mixin):
    """A subclass of ``type(optimizer)``, of the same name, with ``mixin``'s methods."""
    methods = {k: v for k, v in mixin.__dict__.items()
               if k not in ("__dict__", "__weakref__")}
    return type(optimizer.__class__.__name__, (optimizer.__class__,), methods)
