"""FusionPlan: which variables share a fusion buffer, hence a stream.

Horovod's ``groups=`` (or the older ``num_groups=``) become buckets of the ordered
variable list; each bucket is then split by kind (dtype, and device in PyTorch), one
buffer per kind in sorted order. Every rank with the same model builds the same
buffers in the same order, so the streams match across ranks.
"""


class FusionPlan:
    def __init__(self, groups=None, num_groups=0):
        """``groups``: None or 0 (one bucket), an int K (K contiguous buckets, sizes
        as Horovod's ``split_list``: the first n mod K hold one variable more; min(K, n)
        buckets when n < K), or a list of lists (each list a bucket, every other
        variable a bucket of its own). ``num_groups`` is used when groups is None."""
        if groups is None and num_groups:
            groups = num_groups
        if isinstance(groups, int) and groups < 0:
            raise ValueError("groups must be a non-negative integer or a list of lists")
        self._groups = None if groups is None or groups == 0 else (
            groups if isinstance(groups, int) else [list(g) for g in groups])

    def buckets(self, variables):
        """The ordered ``variables`` as a list of buckets."""
        variables = list(variables)
        if self._groups is None:
            return [variables]
        if isinstance(self._groups, int):
            # Exactly K buckets, as Horovod's num_groups makes (ceil(n / K) per bucket
            # would make fewer: 7 variables, K = 5 gave 4).
            k = min(self._groups, len(variables))
            size, extra = divmod(len(variables), k)
            return [variables[i * size + min(i, extra):(i + 1) * size + min(i + 1, extra)]
                    for i in range(k)]
        listed = {id(v) for g in self._groups for v in g}
        return [g for g in self._groups if g] + [[v] for v in variables
                                                 if id(v) not in listed]

    @staticmethod
    def by_kind(buckets, kind):
        """Each bucket split into lists of one ``kind(variable)`` (a sortable key),
        the kinds in sorted order, the variables in their own order."""
        out = []
        for bucket in buckets:
            split = {}
            for v in bucket:
                split.setdefault(kind(v), []).append(v)
            out.extend(split[k] for k in sorted(split))
        return out
