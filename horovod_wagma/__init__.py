"""horovod-wagma: WAGMA-SGD (wait-avoiding group model averaging) for Horovod.

Frameworks live in subpackages: ``horovod_wagma.torch`` (and, later,
``horovod_wagma.keras``). This top level imports no framework.
"""
__version__ = "0.1.0"
