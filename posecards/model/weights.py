"""The q/k weights of a RoPE model's attention layers, one layer at a time (never the whole model).

For layer i it reads ``W_q``, ``W_k`` (and ``b_q``, ``b_k``, the QK-norm gains where the model has
them) and the input norm's gain γ. The weights stay as the file stores them (``StoredHeads``: a
BF16 layer at 2 bytes a value) and are widened a few rows at a time; the math
(``encodings.rope_use.row_stats``) folds γ in as ``W diag(γ)``, what the model applies to the
normalized input. Names per format:

    Hugging Face  <prefix>layers.{i}.self_attn.{q,k}_proj.{weight,bias}, .input_layernorm.weight,
                  .self_attn.{q,k}_norm.weight        (safetensors, sharded, .bin)
    GGUF          blk.{i}.attn_{q,k}.{weight,bias}, blk.{i}.attn_norm.weight,
                  blk.{i}.attn_{q,k}_norm.weight

Pair order is a choice per format (``stored_layout``): a Hugging Face checkpoint holds its rows
in the model's layout (``"half"``: pair k is rows (k, k + d/2) of a head; ``"interleaved"``:
rows (2k, 2k + 1)); a GGUF file that llama.cpp's converter permuted holds a ``"half"`` model's
pair k in rows (2k, 2k + 1), i.e. ``"interleaved"``, and is read so, without de-permuting
(``tests/test_weights.py`` checks both orders give the same numbers).

Gemma's RMSNorm multiplies by ``1 + w``: γ = 1 + w from a Hugging Face checkpoint; llama.cpp's
converter stores ``1 + w`` already (transformers subtracts 1 when it loads a Gemma GGUF).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from posecards.encodings._checks import F64, I64
from posecards.encodings.rope_use import row_stats
from posecards.model.checkpoint import (
    Checkpoint,
    CheckpointError,
    prefetch,
    read_stored,
    read_tensor,
    widen,
)
from posecards.model.layers import ModelLayers

# text model types whose RMSNorm scales by (1 + w) (transformers' Gemma*RMSNorm)
GAMMA_PLUS_ONE = frozenset({"gemma", "gemma2", "gemma3_text", "gemma3"})

AHEAD = 2  # layers whose bytes the kernel is asked for ahead of the one read

_HF_Q = re.compile(r"(.*?)layers\.0\.self_attn\.q_proj\.weight")
_HF_FUSED = re.compile(r"(.*?)layers\.0\.(self_attn|attention|self_attention)\.(qkv_proj|query_key_value|Wqkv|c_attn)\.weight")  # fmt: skip


@dataclass(frozen=True)
class Names:
    """The tensor names of one layer (None: the model has no such tensor)."""

    q: str
    k: str
    norm: str | None
    q_bias: str | None
    k_bias: str | None
    q_norm: str | None
    k_norm: str | None


@dataclass(frozen=True)
class LayerWeights:
    """One attention layer's q/k weights per head, rows in ``layout`` order. The weights are kept
    as stored (BF16 and F16 at 2 bytes a value; GGUF dequantized to float32, which holds its
    values exactly; float64 for F64): the math widens a few rows at a time."""

    index: int
    q: StoredHeads  # (heads, head_dim, d_in) as stored, widened a few rows at a time
    k: StoredHeads  # (kv_heads, head_dim, d_in)
    gamma: F64 | None  # (d_in,) the input norm's gain as the model applies it (Gemma: 1 + w)
    q_bias: F64 | None  # (heads, head_dim)
    k_bias: F64 | None  # (kv_heads, head_dim)
    q_norm: F64 | None  # (head_dim,) QK-norm gain, applied after each head's RMS normalization
    k_norm: F64 | None
    layout: str  # the order the rows are in: "half" or "interleaved"


def stored_layout(ckpt: Checkpoint, layout: str) -> str:
    """The pair order of the rows as the file holds them, for a model of ``layout``."""
    if ckpt.gguf is not None and ckpt.gguf.permuted and layout == "half":
        return "interleaved"  # llama.cpp's permutation: HF pair (k, k + d/2) -> rows (2k, 2k + 1)
    return layout


def layer_names(ckpt: Checkpoint, index: int) -> Names:
    """The names of layer ``index``'s tensors, or a CheckpointError saying what is missing."""
    have = ckpt.tensors
    if ckpt.format == "gguf":
        p = f"blk.{index}."
        return Names(
            q=f"{p}attn_q.weight",
            k=f"{p}attn_k.weight",
            norm=_if(have, f"{p}attn_norm.weight"),
            q_bias=_if(have, f"{p}attn_q.bias"),
            k_bias=_if(have, f"{p}attn_k.bias"),
            q_norm=_if(have, f"{p}attn_q_norm.weight"),
            k_norm=_if(have, f"{p}attn_k_norm.weight"),
        )
    prefix = None
    for name in have:
        if m := _HF_Q.fullmatch(name):
            prefix = m.group(1)
            break
        if m := _HF_FUSED.fullmatch(name):
            raise CheckpointError(
                f"{ckpt.name}: q, k and v are one fused tensor ({name}); posecards reads "
                "separate q_proj and k_proj weights"
            )
    if prefix is None:
        raise CheckpointError(
            f"{ckpt.name}: no q_proj weights found (looked for *layers.0.self_attn.q_proj.weight "
            f"among {len(have)} tensors)"
        )
    p = f"{prefix}layers.{index}."
    return Names(
        q=f"{p}self_attn.q_proj.weight",
        k=f"{p}self_attn.k_proj.weight",
        norm=_if(have, f"{p}input_layernorm.weight"),
        q_bias=_if(have, f"{p}self_attn.q_proj.bias"),
        k_bias=_if(have, f"{p}self_attn.k_proj.bias"),
        q_norm=_if(have, f"{p}self_attn.q_norm.weight"),
        k_norm=_if(have, f"{p}self_attn.k_norm.weight"),
    )


def _if(have: object, name: str) -> str | None:
    return name if name in have else None  # type: ignore[operator]


@dataclass(frozen=True)
class StoredHeads:
    """A q or k weight as the file holds it, ``(heads, head_dim, d_in)``, widened one head at a
    time: ``w[h]`` is head h's ``(head_dim, d_in)`` rows as float16, float32 or float64 (exact:
    BF16 patterns are shifted into float32), checked finite. A BF16 or F16 layer is held at 2
    bytes a value, half its float32 size; ``stats`` hands it to the math
    (``rope_use.row_stats``) as stored, which widens a few rows at a time."""

    model: str  # the checkpoint's name, for messages
    tensor: str
    values: np.ndarray  # (heads, head_dim, d_in) as stored
    bfloat16: bool

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def __getitem__(self, h: int) -> np.ndarray:
        rows = widen(self.values[h], self.bfloat16)  # (head_dim, d_in)
        if not np.isfinite(rows).all():
            raise CheckpointError(
                f"{self.model}: tensor {self.tensor!r} holds NaN or infinite values"
            )
        return rows

    def stats(self, rows: I64, gamma: F64 | None) -> tuple[F64, F64]:
        """``rope_use.row_stats`` of this weight ``(sq (heads, head_dim), dot (heads, pairs))``,
        or a CheckpointError if it holds NaN or ±inf. BF16, F16 and F32 weights are reduced as
        stored and checked on the results: W² of a NaN or ±inf is NaN or +inf, W²γ² too where
        γ_d² > 0, and a sum of terms ≥ 0 with one of them NaN or +inf is not finite, while a
        finite float32-range weight cannot overflow float64 (|W²γ²| < 2^512); slots with
        γ_d² = 0 are checked on the weight itself. F64 weights, which can overflow, are
        checked one head at a time as they are widened."""
        if self.values.dtype == np.float64:
            return row_stats(self, rows, gamma)
        with np.errstate(invalid="ignore"):  # inf·0, inf − inf: refused below, not warned
            sq, dot = row_stats(self.values, rows, gamma, bfloat16=self.bfloat16)
        finite = bool(np.isfinite(sq).all())
        if finite and gamma is not None:
            zero = np.flatnonzero(np.asarray(gamma, np.float64) ** 2 == 0)  # (zeros,)
            if zero.size:
                finite = bool(np.isfinite(widen(self.values[..., zero], self.bfloat16)).all())
        if not finite:
            raise CheckpointError(
                f"{self.model}: tensor {self.tensor!r} holds NaN or infinite values"
            )
        return sq, dot


def _shape(ckpt: Checkpoint, name: str, heads: int, head_dim: int, d_in: int | None) -> None:
    if name not in ckpt.tensors:
        raise CheckpointError(f"{ckpt.name} has no tensor {name!r}")
    shape = ckpt.tensors[name].shape
    want = (heads * head_dim, d_in) if d_in else (heads * head_dim,)
    if len(shape) != len(want) or shape[0] != want[0] or (d_in and shape[1] != d_in):
        raise CheckpointError(
            f"{ckpt.name}: tensor {name!r} has shape {tuple(shape)}, expected "
            f"({heads} heads × {head_dim}{', ' + str(d_in) if d_in else ''}) from the config"
        )


def _heads(ckpt: Checkpoint, name: str, heads: int, head_dim: int, d_in: int) -> StoredHeads:
    """A weight's rows by head, as stored (nothing widened yet)."""
    _shape(ckpt, name, heads, head_dim, d_in)
    s = read_stored(ckpt, name)
    return StoredHeads(ckpt.name, name, s.values.reshape(heads, head_dim, d_in), s.bfloat16)


def _bias(ckpt: Checkpoint, name: str, heads: int, head_dim: int) -> F64:
    """A bias by head ``(heads, head_dim)`` as float64."""
    _shape(ckpt, name, heads, head_dim, None)
    b = read_tensor(ckpt, name)  # float64
    if not np.isfinite(b).all():
        raise CheckpointError(f"{ckpt.name}: tensor {name!r} holds NaN or infinite values")
    out: F64 = b.reshape(heads, head_dim)
    return out


def read_layer(
    ckpt: Checkpoint, reading: ModelLayers, index: int, heads: int, kv_heads: int, head_dim: int
) -> LayerWeights:
    """Layer ``index``'s q/k weights (reads its 2 to 7 tensors, nothing else)."""
    names = layer_names(ckpt, index)
    if names.q not in ckpt.tensors or len(ckpt.tensors[names.q].shape) != 2:
        raise CheckpointError(f"{ckpt.name}: no 2-D tensor {names.q!r}")
    d_in = ckpt.tensors[names.q].shape[1]
    q = _heads(ckpt, names.q, heads, head_dim, d_in)  # (heads, head_dim, d_in)
    k = _heads(ckpt, names.k, kv_heads, head_dim, d_in)  # (kv_heads, head_dim, d_in)
    plus_one = reading.model_type in GAMMA_PLUS_ONE and ckpt.format != "gguf"

    def gain(name: str | None, n: int) -> F64 | None:
        if name is None:
            return None
        g = read_tensor(ckpt, name).reshape(-1)  # float64
        if g.shape != (n,):
            raise CheckpointError(f"{ckpt.name}: tensor {name!r} has {g.size} values, not {n}")
        if not np.isfinite(g).all():
            raise CheckpointError(f"{ckpt.name}: tensor {name!r} holds NaN or infinite values")
        out: F64 = 1.0 + g if plus_one else g
        return out

    def vec(name: str | None, n: int) -> F64 | None:
        return None if name is None else _bias(ckpt, name, n, head_dim)

    kind = reading.rope[reading.layers[index].rope or next(iter(reading.rope))]
    return LayerWeights(
        index=index,
        q=q,
        k=k,
        gamma=gain(names.norm, d_in),
        q_bias=vec(names.q_bias, heads),
        k_bias=vec(names.k_bias, kv_heads),
        q_norm=gain(names.q_norm, head_dim),
        k_norm=gain(names.k_norm, head_dim),
        layout=stored_layout(ckpt, kind.layout),
    )


def iter_layers(
    ckpt: Checkpoint, reading: ModelLayers, heads: int, kv_heads: int, head_dim: int
) -> Iterator[LayerWeights]:
    """Every rotating layer's weights, one layer at a time, read one layer ahead: while the
    caller works on layer j, one reader thread reads layer j + 1 and touches every page of its
    q/k weights (a memory-mapped tensor is read from disk as its pages are first touched; numpy
    releases the GIL while it waits for them), so the disk and the page faults overlap the
    caller's arithmetic. Before a layer is read, the kernel is asked to fetch the bytes of the
    next ``AHEAD`` layers (``checkpoint.prefetch``). At most the layer the caller holds and the
    one being read are in memory; the layers come in order, with the values of reading them one
    after another, and a layer that cannot be read raises its error when the caller asks for
    it, as it would unthreaded."""
    layers = list(reading.rope_layers)

    def read(j: int) -> LayerWeights:
        for ahead in layers[: 1 + AHEAD] if j == 0 else layers[j + AHEAD : j + AHEAD + 1]:
            prefetch(ckpt, _all(layer_names(ckpt, ahead)))
        lw = read_layer(ckpt, reading, layers[j], heads, kv_heads, head_dim)
        for w in (lw.q, lw.k):
            _touch(w.values)
        return lw

    if not layers:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="posecards-read") as reader:
        nxt = reader.submit(read, 0)
        for j in range(len(layers)):
            lw = nxt.result()  # layer j (its error, if it has one)
            if j + 1 < len(layers):
                nxt = reader.submit(read, j + 1)
            yield lw
            del lw  # the caller holds layer j; the generator does not


TOUCH = 512  # bytes between the bytes read: 8 a 4 KiB page, so that even a 1 MiB tensor's
# 2,048 reads are enough for numpy to release the GIL while the page faults wait for the disk


def _touch(values: np.ndarray) -> None:
    """Read a byte of every ``TOUCH`` bytes of ``values`` (which may be a memory map of the
    file): every page of it is then in memory."""
    if values.flags.c_contiguous and values.size:
        np.bitwise_or.reduce(values.reshape(-1).view(np.uint8)[::TOUCH])


def _all(names: Names) -> list[str]:
    return [n for n in (names.norm, names.q, names.q_bias, names.k, names.k_bias, names.q_norm, names.k_norm) if n]  # fmt: skip
