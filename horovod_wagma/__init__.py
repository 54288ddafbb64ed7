"""horovod-wagma: WAGMA-SGD (wait-avoiding group model averaging) for Horovod.

Import a framework's subpackage, each a superset of Horovod's module of that name:
``horovod_wagma.torch`` (PyTorch), ``horovod_wagma.tensorflow`` (the op for
TensorFlow) and ``horovod_wagma.keras`` (Keras 2); what they share, with no framework
in it, is in ``horovod_wagma.common``. ``python -m horovod_wagma.timeline`` views
WAGMA_TIMELINE traces. This top level imports no framework.
"""
__version__ = "0.1.0"
