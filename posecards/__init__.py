"""posecards: computed, bilingual figure cards that explain positional encodings.

The public math API is re-exported here lazily, so that ``import posecards`` (and so
``posecards --help``) stays light: numpy, torch, umap and matplotlib load only when used.
"""

from __future__ import annotations

import importlib
from typing import Any

from posecards._version import __version__

# public name -> module (inside posecards.encodings) that defines it
_API: dict[str, str] = {
    "pair_frequencies": "sinusoidal",
    "sinusoidal_pe": "sinusoidal",
    "wavelengths": "sinusoidal",
    "offset_profile": "similarity",
    "pe_similarity": "similarity",
    "learned_pe": "learned",
    "LearnedPositionTable": "learned",
    "PositionOutOfRangeError": "learned",
    "table_nbytes": "learned",
    "rope_inv_freq": "rope_scaling",
    "ROPE_TYPES": "rope_scaling",
    "rope_angles": "rope",
    "apply_rope": "rope",
    "apply_rope_complex": "rope",
    "rope_layout_permutation": "rope",
    "rope_layout_inverse_permutation": "rope",
    "rope_scores": "rope",
    "rotation_2d": "rope",
    "rope_relative_upper_bound": "rope",
    "rope_pair_slots": "rope",
    "yarn_mscale": "rope_scaling",
    "rotary_dim": "rope_partial",
    "proportional_pairs": "rope_partial",
    "proportional_inv_freq": "rope_partial",
    "head_inv_freq": "rope_partial",
    "mla_softmax_scale": "mla",
    "query_temperature": "query_temperature",
    "query_temperature_steps": "query_temperature",
    "MROPE_AXES": "mrope",
    "mrope_axes": "mrope",
    "mrope_angles": "mrope",
    "mrope_position_ids": "mrope",
    "alibi_slopes": "alibi",
    "alibi_bias": "alibi",
    "alibi_bias_key_only": "alibi",
    "alibi_geometric_slopes": "alibi",
    "dynamic_ntk_base": "dynamic_ntk",
    "round_to_dtype": "precision",
    "first_inexact_integer": "precision",
    "position_ids_from_attention_mask": "position_ids",
    "t5_relative_bucket": "buckets",
    "deberta_log_bucket": "buckets",
    "sincos_2d_pe": "grid2d",
    "sum_angle_2d_pe": "grid2d",
    "swin_relative_position_index": "grid2d",
    "attention_permutation_demo": "attention",
    "PermutationDemo": "attention",
    "float32_angle_error": "precision",
    "Float32AngleError": "precision",
    "project_2d": "projection",
    "pca_2d": "projection",
    "umap_2d": "projection",
    "cosine_similarity": "cosine",
    "softmax": "softmax",
    "normalised_positions": "counting",
    "binary_digits": "counting",
    "smooth_digits": "counting",
    "row_norms": "position_table",
    "unit_rows": "position_table",
    "table_similarity": "position_table",
    "table_offset_profile": "position_table",
    "score_terms": "score_terms",
    "shaw_index": "shaw",
    "shaw_attention": "shaw",
    "xl_relative_distances": "rel_shift",
    "rel_shift": "rel_shift",
    "rel_shift_zero_pad": "rel_shift",
    "xl_terms": "xl_attention",
    "xl_attention": "xl_attention",
    "deberta_relative_positions": "disentangled",
    "disentangled_terms": "disentangled",
    "disentangled_scale": "disentangled",
    "elu_feature_map": "linear_attention",
    "linear_attention": "linear_attention",
}


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'posecards' has no attribute {name!r}")
    return getattr(importlib.import_module(f"posecards.encodings.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
