"""The RoPE calculators for any head dim, base and context (`posecards data rope-calculators`).

Each number is one call of the math layer: Liu et al.'s critical dimension and extrapolation
bound (``encodings.critical_dim``), Men et al.'s base bound (``encodings.rope_base_bound``: does
sum_i cos(m theta_i) stay >= 0 over the context at this base, where does it first go negative,
and, on request, the smallest base that keeps it), and, for a target context, the factor each
scaling method needs (``encodings.scaling_needed``).
"""

from __future__ import annotations

from dataclasses import dataclass

from posecards.encodings.critical_dim import (
    critical_dimension,
    extrapolation_bound,
    turning_pairs,
)
from posecards.encodings.rope_base_bound import first_negative, smallest_base
from posecards.encodings.scaling_needed import METHODS, factor_needed


@dataclass(frozen=True)
class RopeCalculators:
    """What `posecards data rope-calculators` prints, field by field."""

    head_dim: int
    base: float
    context: int
    critical_dimension: int  # Liu et al.: d_extra = 2 ceil((d/2) log_b(L / 2 pi))
    turning_pairs: int  # pairs whose period 2 pi b^(2i/d) fits in the context
    extrapolation_bound: float  # T_extra = 2 pi b^(d_extra / d)
    base_bound_holds: bool  # Men et al.: sum_i cos(m theta_i) >= 0 for 0 <= m < context
    first_negative_distance: int | None  # the first m where it is < 0 (None: it holds)
    smallest_base: float | None  # the smallest base that holds (None: not asked, --smallest-base)
    target: int | None  # the context to extend to (--target)
    factor_needed: dict[str, float]  # method -> smallest factor with no unseen angle at target


def rope_calculators(
    head_dim: int, base: float, context: int, target: int | None, with_smallest: bool
) -> RopeCalculators:
    neg = first_negative(context, head_dim, base)
    return RopeCalculators(
        head_dim=head_dim,
        base=base,
        context=context,
        critical_dimension=critical_dimension(head_dim, base, context),
        turning_pairs=turning_pairs(head_dim, base, context),
        extrapolation_bound=extrapolation_bound(head_dim, base, context),
        base_bound_holds=neg is None,
        first_negative_distance=neg,
        smallest_base=smallest_base(context, head_dim) if with_smallest else None,
        target=target,
        factor_needed={}
        if target is None
        else {m: factor_needed(m, head_dim, base, context, target) for m in METHODS},
    )
