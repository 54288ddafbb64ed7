"""The fp16 rule: how an average computed in fp16 on the wire is applied to a model
kept in fp32 (``compression=Compression.fp16``).

With x the rank's fp32 model, x16 the fp16 value it sent and avg16 the fp16 average
it got back (both read as fp32):

    global round:  x <- avg16                  the same bytes on every rank
    group round:   x <- x + (avg16 - x16)      a correction: x keeps its own
                                               full-precision residual x - x16

A global round must leave every model identical, which only replacing x does; a group
round's average is only a step towards the others, and replacing x there would
round the model to fp16 at every step. ``served_global`` says whether the round that
served the call was global (OptimizerCore.served_global): with wait-avoiding global
rounds that may be a later round than the call's own.
"""


def fp16_result(x, sent, average, served_global, cond):
    """The new x, by the rule above. ``sent`` and ``average`` are already fp32;
    ``cond(condition, if_true, if_false)`` calls one of two functions: python_cond
    for a bool, ``tf.cond`` for a bool tensor in a graph."""
    return cond(served_global, lambda: average, lambda: x + (average - sent))


def python_cond(condition, if_true, if_false):
    return if_true() if condition else if_false()
