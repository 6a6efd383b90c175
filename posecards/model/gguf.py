"""Read a GGUF file (llama.cpp, Ollama, LM Studio): its metadata as a Hugging Face config, and
its tensors one at a time, dequantized.

A GGUF file is a header of typed key-value pairs (``llama.rope.freq_base = 100000.0``, ...), a
table of tensors (name, dims, quantization type, offset) and the tensor data. The ``gguf``
package (llama.cpp's own reader) parses it and memory-maps the data, so a tensor's bytes are read
only when it is dequantized (``gguf.quants.dequantize``), one tensor at a time.

The config: ``ARCHITECTURES`` maps each GGUF architecture posecards reads to the Hugging Face
``model_type`` and the metadata keys to config keys, as transformers 5.23.0 does when it loads a
GGUF (``integrations/ggml.py`` ``GGUF_CONFIG_MAPPING``, ``modeling_gguf_pytorch_utils.py``
``load_gguf_checkpoint``), keeping the keys that decide the position reading and the tensor
shapes. Two differences, both towards the model's own config.json:

- ``{arch}.rope.scaling.type`` / ``.factor`` / ``.original_context_length`` (llama.cpp writes them
  for linear and YaRN scaling) become ``rope_scaling``; transformers 5.23.0 reads them only for
  gpt-oss and drops them for every architecture below.
- ``{arch}.attention.key_length`` becomes ``head_dim`` and ``{arch}.rope.freq_base`` becomes
  ``rope_theta`` wherever the file has them (transformers maps key_length for qwen3_moe and
  Gemma 2/3 only, and reads no rope.freq_base for starcoder2: it keeps the class defaults).

A file whose converter rotated pairs llama.cpp's way is ``permuted``: llama.cpp's
``convert_hf_to_gguf.py`` (``LlamaModel.permute``) reorders each head's q and k rows so that the
Hugging Face pair (k, k + d/2) (``rotate_half``) lies in rows (2k, 2k + 1) (GGML's interleaved
rope). ``unpermute_rows`` undoes it as transformers' ``LlamaTensorProcessor`` does.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posecards.encodings.rope_scaling import ROPE_REGISTRY
from posecards.errors import PosecardsError


class GgufError(PosecardsError):
    """The file is not a GGUF posecards can read; the message names the file and the problem."""


# metadata key (after "{arch}.") -> Hugging Face config key, for every architecture below
_COMMON: dict[str, str] = {
    "context_length": "max_position_embeddings",
    "block_count": "num_hidden_layers",
    "embedding_length": "hidden_size",
    "feed_forward_length": "intermediate_size",
    "attention.head_count": "num_attention_heads",
    "attention.head_count_kv": "num_key_value_heads",
    "attention.key_length": "head_dim",
    "rope.freq_base": "rope_theta",
    "vocab_size": "vocab_size",
}


@dataclass(frozen=True)
class GgufArchitecture:
    """One GGUF ``general.architecture`` as transformers 5.23.0 loads it."""

    model_type: str  # the Hugging Face model_type of the config
    keys: Mapping[str, str]  # metadata key (after "{arch}.") -> config key
    permuted: bool  # q/k rows permuted by llama.cpp's converter (LlamaModel.permute)


def _arch(
    model_type: str, permuted: bool = False, extra: Mapping[str, str] | None = None
) -> GgufArchitecture:
    return GgufArchitecture(model_type, {**_COMMON, **(extra or {})}, permuted)


# general.architecture -> how to read it (a registry: an architecture not here is refused)
ARCHITECTURES: dict[str, GgufArchitecture] = {
    # llama.cpp's "llama" is also Mistral and SmolLM; rope.dimension_count is head_dim there
    "llama": _arch("llama", permuted=True, extra={"rope.dimension_count": "head_dim"}),
    "qwen2": _arch("qwen2"),
    "qwen2moe": _arch("qwen2_moe"),
    "qwen3": _arch("qwen3"),
    "qwen3moe": _arch("qwen3_moe"),
    "phi3": _arch("phi3"),
    "starcoder2": _arch("starcoder2"),
    "gemma2": _arch("gemma2", extra={"attention.sliding_window": "sliding_window"}),
    "gemma3": _arch("gemma3_text", extra={"attention.sliding_window": "sliding_window"}),
}
# llama.cpp's rope.scaling.type -> Hugging Face rope_type ("none": no scaling)
ROPE_SCALING = {t.gguf: t.name for t in ROPE_REGISTRY.values() if t.gguf is not None}
# a tensor of per-frequency factors (llama.cpp's form of Llama 3.1's "llama3" scaling)
ROPE_FREQS = "rope_freqs.weight"
MAX_LAYERS = 4096


@dataclass(frozen=True)
class GgufTensor:
    """One tensor of a GGUF file (nothing read yet). ``shape`` in numpy order (rows first),
    the reverse of GGUF's ``ne``."""

    name: str
    qtype: str  # "F32", "F16", "Q4_1", ...
    shape: tuple[int, ...]
    begin: int  # absolute byte offset of its data
    nbytes: int


@dataclass(frozen=True)
class GgufFile:
    path: Path
    architecture: str  # general.architecture as written
    name: str | None  # general.name
    config: Mapping[str, Any]  # the Hugging Face config it maps to
    metadata_keys: tuple[str, ...]  # the metadata keys read into the config
    permuted: bool
    tensors: Mapping[str, GgufTensor]


_MAGIC = b"GGUF"
_VERSIONS = (2, 3)
# GGUF value types: id -> struct format of one value (8: string, 9: array)
_SCALARS: dict[int, str] = {
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
    10: "<Q", 11: "<q", 12: "<d",
}  # fmt: skip
_STRING, _ARRAY = 8, 9
ARRAY_KEPT = MAX_LAYERS  # arrays longer than this (a vocabulary) are skipped, not kept
MAX_DIMS = 8
MAX_STRING = 1 << 24


class _Header:
    """A little-endian reader over a GGUF header that names the file in every error."""

    def __init__(self, path: Path, fh: Any, size: int) -> None:
        self.path, self.fh, self.size = path, fh, size

    def bad(self, what: str) -> GgufError:
        return GgufError(f"{self.path.name} is not a readable GGUF file ({what})")

    def read(self, n: int) -> bytes:
        b: bytes = self.fh.read(n)
        if len(b) != n:
            raise self.bad("it ends inside its header: truncated")
        return b

    def skip(self, n: int) -> None:
        if self.fh.tell() + n > self.size:
            raise self.bad("it ends inside its header: truncated")
        self.fh.seek(n, 1)

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.unpack("<Q")
        if n > MAX_STRING:
            raise self.bad(f"a string of {n} bytes")
        try:
            return self.read(n).decode("utf-8")
        except UnicodeDecodeError:
            raise self.bad("a string that is not UTF-8") from None

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype != _ARRAY:
            raise self.bad(f"unknown value type {vtype}")
        etype, n = self.unpack("<I"), self.unpack("<Q")
        if n <= ARRAY_KEPT and etype != _ARRAY:
            return [self.value(etype) for _ in range(n)]
        if etype in _SCALARS:  # a long array of numbers: skipped at once
            self.skip(n * struct.calcsize(_SCALARS[etype]))
        elif etype == _STRING:  # a vocabulary: every length read, the bytes skipped
            for _ in range(n):
                self.skip(self.unpack("<Q"))
        else:
            raise self.bad(f"an array of value type {etype}")
        return _Skipped(n)


@dataclass(frozen=True)
class _Skipped:
    """A long array (a vocabulary, merges) that is not kept."""

    length: int


def read_header(path: Path) -> tuple[dict[str, Any], list[GgufTensor]]:
    """The metadata (key -> value) and the tensor table of a GGUF file, reading its header only.
    Checked: magic, version, every length against the file's size, tensors inside the file and
    not overlapping, sizes that match each quantization type's block size."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        size = path.stat().st_size
        fh = path.open("rb")
    except OSError as exc:
        raise GgufError(f"cannot read {path}: {exc.strerror or exc}") from None
    with fh:
        h = _Header(path, fh, size)
        if h.read(4) != _MAGIC:
            raise h.bad("no GGUF magic")
        version = h.unpack("<I")
        if version not in _VERSIONS:
            raise h.bad(f"version {version}; posecards reads little-endian versions 2 and 3")
        n_tensors, n_kv = h.unpack("<Q"), h.unpack("<Q")
        if n_tensors > size or n_kv > size:
            raise h.bad("impossible counts")
        fields: dict[str, Any] = {}
        for _ in range(n_kv):
            key = h.string()
            fields[key] = h.value(h.unpack("<I"))
        infos = []
        for _ in range(n_tensors):
            name = h.string()
            n_dims = h.unpack("<I")
            if n_dims > MAX_DIMS:
                raise h.bad(f"tensor {name!r} has {n_dims} dimensions")
            dims = [h.unpack("<Q") for _ in range(n_dims)]
            qtype, offset = h.unpack("<I"), h.unpack("<Q")
            infos.append((name, dims, qtype, offset))
        align = fields.get("general.alignment", 32)
        if not isinstance(align, int) or align <= 0 or align & (align - 1):
            raise h.bad(f"general.alignment {align!r}")
        start = -(-fh.tell() // align) * align
    tensors, seen = [], set()
    for name, dims, qtype, offset in infos:
        if name in seen:
            raise h.bad(f"tensor {name!r} twice")
        seen.add(name)
        try:
            kind = GGMLQuantizationType(qtype)
            block, type_size = GGML_QUANT_SIZES[kind]
        except (ValueError, KeyError):
            raise h.bad(f"tensor {name!r} has unknown type {qtype}") from None
        count = math.prod(dims)
        if dims and dims[0] % block:
            raise h.bad(f"tensor {name!r}: {dims[0]} values per row for blocks of {block}")
        nbytes = count // block * type_size
        begin = start + offset
        if begin + nbytes > size:
            raise GgufError(
                f"{path.name}: tensor {name!r} lies outside the file (truncated or corrupt)"
            )
        tensors.append(GgufTensor(name, kind.name, tuple(reversed(dims)), begin, nbytes))
    spans = sorted((t.begin, t.begin + t.nbytes, t.name) for t in tensors)
    for (_, end, a), (begin, _, b) in zip(spans, spans[1:], strict=False):
        if begin < end:
            raise GgufError(f"{path.name}: tensors {a!r} and {b!r} overlap")
    return fields, tensors


def _number(path: Path, key: str, value: Any, integer: bool) -> int | float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or (integer and value != int(value)):
        what = "an integer" if integer else "a number"
        raise GgufError(f"{path.name}: metadata {key} must be {what}, got {value!r}")
    return int(value) if integer else float(value)


def read_config(path: Path, fields: Mapping[str, Any]) -> tuple[str, dict[str, Any], list[str]]:
    """(architecture, config, the metadata keys read) of a GGUF's metadata."""
    arch = fields.get("general.architecture")
    if not isinstance(arch, str):
        raise GgufError(f"{path.name}: no general.architecture in its metadata")
    spec = ARCHITECTURES.get(arch)
    if spec is None:
        raise GgufError(
            f"{path.name}: GGUF architecture {arch!r} is not one posecards maps to a Hugging Face "
            f"config (it reads {', '.join(sorted(ARCHITECTURES))})"
        )
    name = fields.get("general.name")
    model_type = spec.model_type
    # transformers 5.23.0: a "llama" file is a Mistral when ``"mistral" in [general.name]``, i.e.
    # when its name is exactly "mistral"
    if arch == "llama" and name == "mistral":
        model_type = "mistral"
    config: dict[str, Any] = {"model_type": model_type}
    read = ["general.architecture"]
    for suffix, hf_key in spec.keys.items():
        key = f"{arch}.{suffix}"
        if key not in fields:
            continue
        value = fields[key]
        if isinstance(value, list | _Skipped):
            raise GgufError(
                f"{path.name}: metadata {key} is a list (one value per layer); posecards reads "
                "models whose layers share it"
            )
        config[hf_key] = _number(path, key, value, integer=hf_key != "rope_theta")
        read.append(key)
    scaling = _rope_scaling(path, arch, fields, read)
    if scaling is not None:
        config["rope_scaling"] = scaling
    return arch, config, read


def _rope_scaling(
    path: Path, arch: str, fields: Mapping[str, Any], read: list[str]
) -> dict[str, Any] | None:
    key = f"{arch}.rope.scaling.type"
    if key not in fields:
        return None
    kind = fields[key]
    read.append(key)
    if kind == "none":
        return None
    if kind not in ROPE_SCALING:
        raise GgufError(
            f"{path.name}: {key} = {kind!r} is not read by posecards "
            f"({', '.join(['none', *ROPE_SCALING])})"
        )
    out: dict[str, Any] = {"rope_type": ROPE_SCALING[kind]}
    for suffix, hf_key, integer in (
        ("factor", "factor", False),
        ("original_context_length", "original_max_position_embeddings", True),
    ):
        k = f"{arch}.rope.scaling.{suffix}"
        if k in fields:
            out[hf_key] = _number(path, k, fields[k], integer)
            read.append(k)
    return out


def open_gguf(path: Path) -> GgufFile:
    """Index a GGUF file: its config and tensor table (no tensor data is read)."""
    fields, table = read_header(path)
    arch, config, read = read_config(path, fields)
    layers = config.get("num_hidden_layers", 0)
    if not 0 < layers <= MAX_LAYERS:
        raise GgufError(f"{path.name}: {arch}.block_count must be 1 to {MAX_LAYERS}, got {layers}")
    tensors = {t.name: t for t in table}
    if ROPE_FREQS in tensors:
        raise GgufError(
            f"{path.name} holds {ROPE_FREQS} (llama.cpp's per-frequency factors, its form of "
            "Llama 3.1's llama3 RoPE scaling), which posecards does not map to rope_parameters"
        )
    name = fields.get("general.name")
    return GgufFile(
        path=path,
        architecture=arch,
        name=name if isinstance(name, str) else None,
        config=config,
        metadata_keys=tuple(read),
        permuted=ARCHITECTURES[arch].permuted,
        tensors=tensors,
    )


# numpy dtypes of the unquantized GGUF types (gguf.quants dequantizes the others)
_PLAIN = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I8": "i1", "I16": "<i2", "I32": "<i4"}


def read_gguf_tensor(path: Path, t: GgufTensor, dtype: Any = np.float64) -> np.ndarray:
    """One tensor, dequantized by the ``gguf`` package (llama.cpp's own code), as float64 (or
    ``dtype``: float32 holds every dequantized value exactly) in numpy order (rows first). Only
    its own bytes are read."""
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import dequantize

    try:
        with path.open("rb") as fh:
            fh.seek(t.begin)
            buf = fh.read(t.nbytes)
    except OSError as exc:
        raise GgufError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(buf) != t.nbytes:
        raise GgufError(f"{path.name} ends inside tensor {t.name!r} (truncated)")
    count = math.prod(t.shape)
    if t.qtype in _PLAIN:
        values = np.frombuffer(buf, dtype=np.dtype(_PLAIN[t.qtype]), count=count)
    else:
        rows = np.frombuffer(buf, dtype=np.uint8).reshape(count // t.shape[-1], -1)  # (rows, B)
        try:
            values = dequantize(rows, GGMLQuantizationType[t.qtype])
        except NotImplementedError:
            raise GgufError(
                f"{path.name}: tensor {t.name!r} is {t.qtype}, which the gguf package cannot "
                "dequantize"
            ) from None
    return np.asarray(values, dtype=dtype).reshape(t.shape)


def unpermute_rows(w: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k permutation (transformers' ``_reverse_permute_weights``).

    The converter wrote ``w.reshape(heads, 2, d/2, ...).swapaxes(1, 2)``: row h·d + 2k + j of the
    file is Hugging Face row h·d + j·d/2 + k. Here: ``(heads·d, ...)`` -> ``(heads·d, ...)``.
    """
    if w.shape[0] % (2 * heads):
        raise ValueError(f"rows {w.shape[0]} do not split into {heads} heads of pairs")
    half = w.shape[0] // heads // 2
    return w.reshape(heads, half, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


# llama.cpp tensor names -> Hugging Face names (the ones posecards reads), per layer
_LAYER = re.compile(r"blk\.(\d+)\.(.+)")
HF_NAMES: dict[str, str] = {
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q_norm.weight": "self_attn.q_norm.weight",
    "attn_k_norm.weight": "self_attn.k_norm.weight",
}


def hf_name(name: str) -> str | None:
    """The Hugging Face name of a llama.cpp layer tensor posecards reads, else None."""
    m = _LAYER.fullmatch(name)
    if m is None or m.group(2) not in HF_NAMES:
        return None
    return f"model.layers.{m.group(1)}.{HF_NAMES[m.group(2)]}"
