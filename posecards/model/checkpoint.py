"""Read a local Hugging Face checkpoint one tensor at a time, never the whole file.

A checkpoint is a folder with ``config.json`` and its weights, in one of the layouts
``save_pretrained`` writes:

    model.safetensors                                     one file
    model.safetensors.index.json + model-0000i-of-0000n   sharded; the index maps names to files
    pytorch_model.bin (or its .index.json + shards)       torch's zip format

or a single ``.safetensors`` file (with ``config.json`` beside it, if there is one), a lone
``config.json`` (enough for RoPE and ALiBi), or a GGUF file (or a folder holding one GGUF and no
config.json): its metadata mapped to a config and its tensors dequantized (``model/gguf.py``).

safetensors is an 8-byte little-endian header length, a JSON header
``{name: {dtype, shape, data_offsets: [begin, end]}}`` and the raw little-endian bytes; a tensor
is read by seeking to ``8 + header_len + begin`` and reading ``end - begin`` bytes, or, from
``MAP_BYTES`` (1 MiB) on, viewed in a read-only memory map of those bytes. ``.bin`` files
are opened with ``torch.load(mmap=True, weights_only=True)``: the storages are memory-mapped and
only the pages of the tensor converted are read. Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posecards.errors import PosecardsError
from posecards.model.gguf import GgufFile, open_gguf, read_gguf_tensor


class CheckpointError(PosecardsError):
    """The path is not a readable local checkpoint; the message says what was looked for."""


# safetensors dtype -> numpy dtype of the stored bytes (little-endian). BF16 is read as uint16.
_ST_DTYPES: dict[str, str] = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}
_MAX_HEADER = 100 * 1024 * 1024  # a safetensors header larger than this is not a checkpoint

SINGLE_SAFETENSORS = "model.safetensors"
SHARDED_SAFETENSORS = "model.safetensors.index.json"
SINGLE_BIN = "pytorch_model.bin"
SHARDED_BIN = "pytorch_model.bin.index.json"
WEIGHT_FILES = (SINGLE_SAFETENSORS, SHARDED_SAFETENSORS, SINGLE_BIN, SHARDED_BIN)

# "gpt2", "openai-community/gpt2": what a hub id looks like (a local path that does not exist)
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")


@dataclass(frozen=True)
class TensorEntry:
    """Where one tensor lives: its file, stored dtype and shape (nothing read yet)."""

    name: str
    file: Path
    dtype: str  # as stored: "F32", "BF16", ... (safetensors) or "float32", ... (torch)
    shape: tuple[int, ...]
    begin: int = 0  # safetensors: absolute byte offset of the data in the file
    end: int = 0

    @property
    def nbytes(self) -> int:
        return self.end - self.begin


@dataclass(frozen=True)
class Checkpoint:
    """A local checkpoint: its config (may be empty) and an index of its tensors."""

    root: Path  # the folder (or the .safetensors file given)
    name: str  # folder or file name, for display
    config: Mapping[str, Any]
    config_file: Path | None
    weights: tuple[Path, ...]  # the weight files, in shard order
    format: str  # "safetensors", "bin", "gguf" or "none" (config only)
    tensors: Mapping[str, TensorEntry]
    gguf: GgufFile | None = None  # a GGUF file: its architecture, metadata keys, permutation

    def file_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.weights)


def _read_safetensors_index(path: Path) -> dict[str, TensorEntry]:
    """The header of one safetensors file: name -> TensorEntry (reads only the header)."""
    size = path.stat().st_size
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{path.name} is not a safetensors file (too short)")
            (n,) = struct.unpack("<Q", head)
            if n > min(_MAX_HEADER, size - 8):
                raise CheckpointError(f"{path.name} is not a safetensors file (bad header length)")
            header = json.loads(fh.read(n))
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        raise CheckpointError(f"{path.name} is not a safetensors file (bad header)") from None
    except OSError as exc:
        raise CheckpointError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path.name} is not a safetensors file (bad header)")
    out = {}
    start = 8 + n
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        entry = _header_entry(path, name, info, start, size)
        out[name] = entry
        spans.append((entry.begin, entry.end, name))
    spans.sort()
    for (_, end, a), (begin, _, b) in zip(spans, spans[1:], strict=False):
        if begin < end:
            raise CheckpointError(f"{path.name}: tensors {a!r} and {b!r} overlap")
    return out


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _header_entry(path: Path, name: str, info: Any, start: int, size: int) -> TensorEntry:
    """One header entry, checked as strictly as the safetensors library does."""
    bad = CheckpointError(f"{path.name}: bad header entry for {name!r}")
    if not isinstance(info, dict):
        raise bad
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str) or not isinstance(shape, list) or not isinstance(offsets, list):
        raise bad
    if not all(_is_int(s) and s >= 0 for s in shape) or len(shape) > 16:
        raise bad
    if len(offsets) != 2 or not all(_is_int(x) for x in offsets):
        raise bad
    begin, end = offsets
    if not 0 <= begin <= end or start + end > size:
        raise CheckpointError(f"{path.name}: tensor {name!r} lies outside the file")
    return TensorEntry(name, path, dtype, tuple(shape), start + begin, start + end)


def _torch_load(path: Path) -> dict[str, Any]:
    """A .bin state dict, memory-mapped (only the tensors converted are read from disk)."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as exc:  # torch raises RuntimeError, UnpicklingError, ValueError...
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(
            f"cannot read {path.name} as a torch zip checkpoint ({first}); "
            "re-save it with torch.save or as safetensors"
        ) from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path.name} does not hold a state dict of tensors")
    return state


def _bin_index(path: Path) -> dict[str, TensorEntry]:
    state = _torch_load(path)
    import torch

    out = {}
    for name, t in state.items():
        if not isinstance(name, str):
            raise CheckpointError(f"{path.name}: a state dict key is not a string: {name!r}")
        # dense tensors only: sparse, quantized or meta tensors cannot be read as a table
        if isinstance(t, torch.Tensor) and t.layout == torch.strided and not t.is_quantized:
            out[name] = TensorEntry(name, path, str(t.dtype).removeprefix("torch."), tuple(t.shape))
    return out


def _shards(folder: Path, index_name: str) -> list[Path]:
    index_file = folder / index_name
    try:
        weight_map = json.loads(index_file.read_text(encoding="utf-8"))["weight_map"]
        files = sorted({str(f) for f in weight_map.values()})
    except (
        OSError,
        UnicodeDecodeError,
        ValueError,
        RecursionError,
        KeyError,
        TypeError,
        AttributeError,
    ):
        raise CheckpointError(f"{index_file.name} is not a shard index (no 'weight_map')") from None
    paths = []
    for f in files:
        p = folder / f
        if "/" in f or "\\" in f or f.startswith(".") or not p.is_file():
            raise CheckpointError(f"{index_file.name} names shard {f!r}, which is not in {folder}")
        paths.append(p)
    return paths


def _read_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise CheckpointError(f"{path.name} is not valid JSON: {why}") from None
    if not isinstance(config, dict):
        raise CheckpointError(f"{path.name} must hold a JSON object")
    return config


def model_name(folder: Path) -> str:
    """The model's name: the folder's, or 'org/name' for a Hugging Face cache snapshot
    (``.../models--org--name/snapshots/<commit>/``)."""
    folder = folder.resolve()
    repo = folder.parent.parent.name
    if folder.parent.name == "snapshots" and repo.startswith("models--"):
        return repo.removeprefix("models--").replace("--", "/")
    return folder.name


def _gguf_checkpoint(p: Path) -> Checkpoint:
    g = open_gguf(p)
    tensors = {
        t.name: TensorEntry(t.name, p, t.qtype, t.shape, t.begin, t.begin + t.nbytes)
        for t in g.tensors.values()
    }
    return Checkpoint(
        root=p,
        name=p.stem,
        config=g.config,
        config_file=None,
        weights=(p,),
        format="gguf",
        tensors=tensors,
        gguf=g,
    )


def open_checkpoint(path: str | Path) -> Checkpoint:
    """Index a local checkpoint (config and tensor headers only; no tensor data is read)."""
    raw = str(path)
    p = Path(path)
    if not p.exists():
        if _HUB_ID.fullmatch(raw) and not raw.startswith("."):
            raise CheckpointError(
                f"{raw!r} is not a local path; posecards inspect reads only local model folders "
                "or .safetensors files and downloads nothing (download the model first)"
            )
        raise CheckpointError(f"{raw} does not exist")
    if p.is_file() and p.suffix == ".json":
        return _config_only(p)
    if p.is_file() and p.suffix == ".gguf":
        return _gguf_checkpoint(p)
    if p.is_file():
        return _safetensors_file(p)
    if not p.is_dir():
        raise CheckpointError(f"{raw} is neither a folder nor a .safetensors or .gguf file")
    return _folder(p, raw)


def _config_only(p: Path) -> Checkpoint:
    """A lone config.json: RoPE and ALiBi need nothing else (a learned table does)."""
    return Checkpoint(
        root=p,
        name=model_name(p.parent) if p.stem == "config" else p.stem,
        config=_read_config(p),
        config_file=p,
        weights=(),
        format="none",
        tensors={},
    )


def _safetensors_file(p: Path) -> Checkpoint:
    """One .safetensors file, with the config.json beside it if there is one."""
    if p.suffix != ".safetensors":
        raise CheckpointError(
            f"{p.name}: give a model folder (config.json + weights), a .safetensors file, "
            "a .gguf file or a config.json"
        )
    config_file = p.parent / "config.json"
    config = _read_config(config_file) if config_file.is_file() else {}
    generic = p.stem == "model" or p.stem.startswith("model-")
    return Checkpoint(
        root=p,
        name=model_name(p.parent) if generic else p.stem,
        config=config,
        config_file=config_file if config_file.is_file() else None,
        weights=(p,),
        format="safetensors",
        tensors=_read_safetensors_index(p),
    )


def _weight_files(p: Path) -> tuple[list[Path], str]:
    """A folder's weight files in shard order and their format, in the order save_pretrained's
    layouts are looked for (``([], "none")``: none of them)."""
    if (p / SINGLE_SAFETENSORS).is_file():
        return [p / SINGLE_SAFETENSORS], "safetensors"
    if (p / SHARDED_SAFETENSORS).is_file():
        return _shards(p, SHARDED_SAFETENSORS), "safetensors"
    if (p / SINGLE_BIN).is_file():
        return [p / SINGLE_BIN], "bin"
    if (p / SHARDED_BIN).is_file():
        return _shards(p, SHARDED_BIN), "bin"
    return [], "none"


def _folder(p: Path, raw: str) -> Checkpoint:
    """A model folder: config.json and save_pretrained's weights, or one GGUF file alone."""
    config_file = p / "config.json"
    config = _read_config(config_file) if config_file.is_file() else {}
    weights, fmt = _weight_files(p)
    ggufs = sorted(p.glob("*.gguf"))
    if not config and not weights and len(ggufs) == 1:
        return _gguf_checkpoint(ggufs[0])
    if not config and not weights and ggufs:
        raise CheckpointError(
            f"{raw} holds {len(ggufs)} GGUF files ({', '.join(g.name for g in ggufs[:3])}, ...): "
            "name the one to read"
        )
    if not config and not weights:
        raise CheckpointError(
            f"{raw} has no config.json and none of {', '.join(WEIGHT_FILES)}: not a model folder"
        )
    tensors: dict[str, TensorEntry] = {}
    for w in weights:
        tensors.update(_read_safetensors_index(w) if fmt == "safetensors" else _bin_index(w))
    return Checkpoint(
        root=p,
        name=model_name(p),
        config=config,
        config_file=config_file if config_file.is_file() else None,
        weights=tuple(weights),
        format=fmt,
        tensors=tensors,
    )


def _bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    # bfloat16 is the top half of a float32: shift the 16 bits up and reinterpret (in place: one
    # float32-sized array, no second temporary)
    wide = bits.astype(np.uint32)
    wide <<= 16
    return wide.view(np.float32)


def _safetensors_values(entry: TensorEntry) -> np.ndarray:
    """One safetensors tensor's values as stored (BF16: its 16-bit patterns as uint16), a
    read-only view of its bytes: nothing converted. Tensors of ``MAP_BYTES`` or more are viewed
    in a memory map of the file (``_mapped``), smaller ones in the bytes read."""
    name = entry.name
    if entry.dtype not in _ST_DTYPES or entry.dtype == "BOOL":
        raise CheckpointError(f"tensor {name!r} has dtype {entry.dtype}, which is not read")
    dt = np.dtype(_ST_DTYPES[entry.dtype])
    count = math.prod(entry.shape)
    if count * dt.itemsize != entry.nbytes:
        raise CheckpointError(f"tensor {name!r}: {entry.nbytes} bytes for shape {entry.shape}")
    buf: bytes | memoryview | None = _mapped(entry) if entry.nbytes >= MAP_BYTES else None
    if buf is None:
        with entry.file.open("rb") as fh:
            fh.seek(entry.begin)
            buf = fh.read(entry.nbytes)
    if len(buf) != entry.nbytes:
        raise CheckpointError(f"{entry.file.name} ends inside tensor {name!r}")
    return np.frombuffer(buf, dtype=dt, count=count).reshape(entry.shape)


MAP_BYTES = 1 << 20  # safetensors tensors this large are mapped from the page cache, not copied


def _mapped(entry: TensorEntry) -> memoryview | None:
    """A tensor's bytes as a read-only memory map of its file: no copy out of the page cache
    (the pages are read from disk as they are first touched, or before, where
    ``prefetch`` asked for them), unmapped when the last array on it goes. None where the file
    is shorter than the tensor's end (the plain read says so) or cannot be mapped. A file cut
    short while its map is in use would stop the process (SIGBUS), as ``.bin`` files' maps
    would: a checkpoint is not rewritten while it is read."""
    offset = entry.begin - entry.begin % mmap.ALLOCATIONGRANULARITY  # the map starts aligned
    try:
        with entry.file.open("rb") as fh:
            if os.fstat(fh.fileno()).st_size < entry.end:
                return None
            m = mmap.mmap(fh.fileno(), entry.end - offset, access=mmap.ACCESS_READ, offset=offset)
    except (OSError, ValueError):
        return None
    return memoryview(m)[entry.begin - offset :]


def read_tensor(ckpt: Checkpoint, name: str, dtype: Any = np.float64) -> Any:
    """One tensor as float64 (or ``dtype``: float32 holds F32, F16 and BF16 values exactly),
    reading only its own bytes."""
    entry = ckpt.tensors.get(name)
    if entry is None:
        raise CheckpointError(f"{ckpt.name} has no tensor {name!r}")
    if entry.file.suffix == ".gguf" and ckpt.gguf is not None:
        return read_gguf_tensor(entry.file, ckpt.gguf.tensors[name], dtype)
    if entry.file.suffix == ".safetensors":
        arr = _safetensors_values(entry)
        if entry.dtype == "BF16":
            arr = _bf16_to_f32(arr)
        return np.asarray(arr, dtype=dtype)
    import torch

    t = _torch_load(entry.file)[name]
    if t.is_complex():
        raise CheckpointError(f"tensor {name!r} is complex ({entry.dtype}); a table is real")
    return np.asarray(t.to(torch.float64).numpy(), dtype=dtype).reshape(entry.shape)


# stored dtypes whose values float32 holds exactly, kept as stored by read_stored
_FLOAT_AS_STORED = frozenset({"F16", "F32", "F64", "BF16"})


@dataclass(frozen=True)
class Stored:
    """A tensor's values as the file holds them: float16, float32 or float64, or bfloat16's
    16-bit patterns (``bfloat16``: uint16, widened exactly by ``widen``). GGUF (dequantized),
    ``.bin`` and integer tensors are float32 (float64 for a float64 tensor)."""

    values: np.ndarray
    bfloat16: bool


def read_stored(ckpt: Checkpoint, name: str) -> Stored:
    """One tensor without widening it (a BF16 weight stays at 2 bytes a value until it is used),
    reading only its own bytes."""
    entry = ckpt.tensors.get(name)
    if entry is None:
        raise CheckpointError(f"{ckpt.name} has no tensor {name!r}")
    if entry.file.suffix == ".safetensors" and entry.dtype in _FLOAT_AS_STORED:
        return Stored(_safetensors_values(entry), entry.dtype == "BF16")
    wide = np.float64 if entry.dtype in ("F64", "float64") else np.float32
    return Stored(read_tensor(ckpt, name, wide).reshape(entry.shape), False)


def widen(values: np.ndarray, bfloat16: bool) -> np.ndarray:
    """Stored values as floats numpy widens exactly: bfloat16 patterns shifted into float32."""
    return _bf16_to_f32(values) if bfloat16 else values


def prefetch(ckpt: Checkpoint, names: Iterable[str]) -> None:
    """Ask the kernel to start reading these tensors' bytes into the page cache and return at
    once (``posix_fadvise(WILLNEED)``): a later read of them waits less, and nothing is read
    into this process. Only tensors with a byte range (safetensors, GGUF); where the system has
    no ``posix_fadvise``, nothing."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    entries = [ckpt.tensors[n] for n in names if n in ckpt.tensors]
    for file in dict.fromkeys(e.file for e in entries if e.nbytes > 0):
        try:
            fd = os.open(file, os.O_RDONLY)
        except OSError:
            continue  # the read that follows says what is wrong with the file
        try:
            for e in entries:
                if e.file == file and e.nbytes > 0:
                    advise(fd, e.begin, e.nbytes, os.POSIX_FADV_WILLNEED)
        finally:
            os.close(fd)
