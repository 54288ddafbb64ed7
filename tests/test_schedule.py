"""The group schedule (docs/design.md, section 2), checked independently of the engine's code."""
import math

import pytest

from horovod_wagma.common.op.schedule import default_group_size, groups, optimizer_group_size


def min_phases(P, S):
    L, reach = 0, 1
    while reach < P:
        reach, L = reach * S, L + 1
    return L


def fully_mixes(P, phases):
    """Any len(phases) cyclically consecutive phases carry every rank's value to all."""
    L = len(phases)
    for start in range(L):
        knows = [{r} for r in range(P)]
        for j in range(L):
            for g in phases[(start + j) % L]:
                u = set().union(*(knows[r] for r in g))
                for r in g:
                    knows[r] = u
        if any(len(k) != P for k in knows):
            return False
    return True


def factors_into(P, S, L):
    """True when P is a product of L factors, each in [1, S]."""
    if L == 0:
        return P == 1
    return any(P % d == 0 and factors_into(P // d, S, L - 1) for d in range(2, S + 1)) \
        or (P == 1)


ALL = [(P, S) for S in range(2, 9) for P in range(1, 65)]


@pytest.mark.parametrize("S", range(2, 9))
def test_partitions_bounded_groups_and_full_mixing(S):
    for P in range(1, 65):
        phases = groups(P, S)
        for phase in phases:
            members = sorted(r for g in phase for r in g)
            assert members == list(range(P)), (P, S, phase)
            assert all(1 <= len(g) <= S for g in phase), (P, S, phase)
            assert all(g == sorted(g) for g in phase)
        assert fully_mixes(P, phases), (P, S, phases)
        L0 = min_phases(P, S)
        # Minimal where the sizes allow it; never far off where they do not.
        if P > 1 and factors_into(P, S, L0):
            assert len(phases) == L0, (P, S, len(phases))
        assert len(phases) <= 2 * L0 + 1, (P, S, len(phases))


@pytest.mark.parametrize("S,L", [(2, 1), (2, 3), (2, 5), (3, 2), (3, 3), (4, 2), (4, 3),
                                 (8, 2), (5, 2), (16, 2), (32, 2), (2, 7), (4, 4)])
def test_power_of_S_is_exactly_the_butterfly(S, L):
    P = S ** L
    phases = groups(P, S)
    assert len(phases) == L

    def digits(r):
        return [(r // S ** p) % S for p in range(L)]

    for p, phase in enumerate(phases):
        expected = {}
        for r in range(P):
            d = digits(r)
            expected.setdefault(tuple(d[:p] + d[p + 1:]), []).append(r)
        assert sorted(phase) == sorted(expected.values()), (S, L, p)


def fully_mixes_bits(P, phases):
    """fully_mixes with Python ints as bitsets (fast for P in the hundreds)."""
    L = len(phases)
    for start in range(L):
        knows = [1 << r for r in range(P)]
        for j in range(L):
            for g in phases[(start + j) % L]:
                u = 0
                for r in g:
                    u |= knows[r]
                for r in g:
                    knows[r] = u
        if any(k != (1 << P) - 1 for k in knows):
            return False
    return True


# Beyond 64 ranks: the optimizers' default S is sqrt(P) rounded up to a power of two
# (16 up to P = 256, 32 up to 1024; README, api.md), the op's too, and a group size
# may be any int >= 2. More ranks than one 64-bit word holds.
LARGE = sorted({(P, S) for P in (65, 96, 100, 128, 200, 256, 500, 1000, 1024)
                for S in (default_group_size(P), optimizer_group_size(P), 10, 12)})


@pytest.mark.parametrize("P,S", LARGE)
def test_large_worlds_partition_bounded_groups_and_mix_fully(P, S):
    """semantics.md, the group schedule, for P > 64: every phase partitions the ranks
    into groups of at most S, any L consecutive phases mix every rank into every rank,
    L is the fewest where P factors into L sizes of at most S, and never more than
    2 * ceil(log_S P) + 1."""
    phases = groups(P, S)
    for phase in phases:
        assert sorted(r for g in phase for r in g) == list(range(P)), (P, S)
        assert all(1 <= len(g) <= S and g == sorted(g) for g in phase), (P, S)
    assert fully_mixes_bits(P, phases), (P, S, len(phases))
    L0 = min_phases(P, S)
    if factors_into(P, S, L0):
        assert len(phases) == L0, (P, S, len(phases))
    assert len(phases) <= 2 * L0 + 1, (P, S, len(phases))


def test_single_group_when_S_at_least_P():
    assert groups(5, 8) == [[[0, 1, 2, 3, 4]]]
    assert groups(4, 4) == [[[0, 1, 2, 3]]]
    assert groups(1, 2) == [[[0]]]


def test_the_torch_frontends_groups_takes_the_group_size():
    """README: hvd.groups(P, S) from horovod_wagma.torch is the schedule for groups of
    at most S, not the default S's (at P=8 the default is 4)."""
    import horovod_wagma.torch as hvd
    assert hvd.groups(8, 2) == groups(8, 2)
    assert hvd.groups(8, 2)[0] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert all(len(g) == 2 for phase in hvd.groups(8, 2) for g in phase)
    assert hvd.groups(12, 3) == groups(12, 3) and hvd.groups(8) == groups(8)


def test_other_sizes_are_even_and_minimal():
    # 6 and 12 factor into groups <= 4 in two phases; primes still mix fully.
    for P in (6, 12):
        phases = groups(P, 4)
        assert len(phases) == 2
        for phase in phases:
            sizes = [len(g) for g in phase]
            assert max(sizes) - min(sizes) <= 1
    for P in (5, 7, 11):
        assert fully_mixes(P, groups(P, 4))
        assert len(groups(P, 4)) == 2
    # 13 ranks in groups <= 4 cannot mix in two phases: every second-phase group would
    # have to meet all >= 4 first-phase groups, so all would have exactly 4 members.
    assert fully_mixes(13, groups(13, 4)) and len(groups(13, 4)) == 3


def test_default_group_size_is_smallest_power_of_two_above_sqrt():
    for P in range(1, 300):
        S = default_group_size(P)
        assert S >= 2 and S & (S - 1) == 0
        assert S * S >= P
        assert S == 2 or (S // 2) ** 2 < P
    # api.md: groups(size, group_size=None) prints the schedule of the op's default S
    # (semantics.md: "default the smallest power of two >= sqrt(P)"), not the
    # optimizers' min(P, max(8, ...)): 4 ranks mix in two phases of pairs.
    for P in range(1, 65):
        assert groups(P) == groups(P, default_group_size(P)), P
    assert sorted(map(sorted, groups(4))) == [[[0, 1], [2, 3]], [[0, 2], [1, 3]]], groups(4)


def test_optimizer_group_size_is_every_rank_up_to_8_then_at_least_8():
    for P in range(1, 300):
        S = optimizer_group_size(P)
        assert S == max(2, min(P, max(8, default_group_size(P))))
    assert [optimizer_group_size(P) for P in (1, 2, 5, 8, 9, 64, 65, 1024)] == \
        [2, 2, 5, 8, 8, 8, 16, 32]


def test_invalid_arguments():
    with pytest.raises(ValueError):
        groups(0, 2)
    with pytest.raises(ValueError):
        groups(4, 1)
