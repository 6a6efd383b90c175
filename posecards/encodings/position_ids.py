"""Position ids of a padded batch: which position each token is rotated (or looked up) at.

A batch of prompts of different lengths is padded to one length; the attention mask marks the
real tokens (1) and the padding (0). Hugging Face's generation derives the position ids from the
mask (transformers 5.23.0, ``GenerationMixin._prepare_position_ids_for_generation``)::

    position_ids = attention_mask.cumsum(-1) - 1      # real tokens: 0, 1, 2, ... in each row
    position_ids[attention_mask == 0] = 0             # padding: 0 (masked out anyway)

so every row's first real token is at position 0, however much padding precedes it.

What this means for RoPE: a score sees only the distance between query and key,
``<R_m q, R_n k> = <q, R_(n-m) k>``, so position ids that are off by the same constant for a whole
row (positions counted from the first pad of a left-padded row) change no score. Ids that jump
(a gap, e.g. a generated token numbered by the batch's longest row) put every key before the
jump at the wrong distance. A learned position table is hurt by either: it looks rows up by the
absolute id.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from posecards.encodings._checks import I64


def position_ids_from_attention_mask(attention_mask: npt.ArrayLike) -> I64:
    """Position ids from a 0/1 attention mask, as transformers' generation computes them.

    ``attention_mask`` has shape ``(batch, length)`` (or ``(length,)``); the result has the same
    shape, int64: ``cumsum(mask) - 1`` on real tokens and ``0`` on padding.
    """
    mask = np.asarray(attention_mask)
    if mask.ndim not in (1, 2) or mask.size == 0:
        raise ValueError(
            f"attention_mask must be a non-empty (batch, length) or (length,) array, "
            f"got shape {mask.shape}"
        )
    if not np.all((mask == 0) | (mask == 1)):
        raise ValueError("attention_mask must hold only 0 (padding) and 1 (real tokens)")
    m = mask.astype(np.int64)  # (batch, length)
    ids = np.cumsum(m, axis=-1) - 1  # (batch, length) 0, 1, 2, ... over the real tokens
    return np.where(m == 1, ids, 0).astype(np.int64)  # (batch, length) padding -> 0
