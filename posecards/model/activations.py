"""Run a local model on text through transformers' own modeling code and hand each decoder
layer's queries, keys and attention weights to a caller (``posecards inspect --activations``).

The model is built by the installed transformers on the CPU in float32 with eager attention:
from a Hugging Face folder with ``from_pretrained`` (local files only, never remote code); from a
GGUF file with ``AutoConfig`` and ``load_gguf_checkpoint`` (the gguf package dequantizes, and
transformers undoes llama.cpp's q/k permutation). The eager kernel of the model's modeling module
(``eager_attention_forward``) is wrapped for one pass: it receives q and k after RoPE turned them
(key heads before they are repeated for grouped-query attention) and returns the softmax weights,
which go to the caller one layer at a time and are not kept. Nothing here computes statistics
(``posecards.encodings.activation_stats``) or draws.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from posecards.model.checkpoint import Checkpoint, CheckpointError

# (layer index, q (tokens, heads, head_dim), k (tokens, kv_heads, head_dim), attention weights
# (heads, tokens, tokens)), float32 as the model computed them
OnLayer = Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]

MAX_TOKENS = 2048  # tokens of text run through the model at most
# the files a Hugging Face folder keeps its tokenizer in (one is enough)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "spiece.model")


def _available_bytes() -> int | None:
    """MemAvailable of /proc/meminfo (Linux), None elsewhere."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def needed_bytes(ckpt: Checkpoint, tokens: int, heads: int) -> int:
    """What a float32 forward pass on ``tokens`` tokens needs at least: the parameters twice
    (as loaded and as the model's float32 copy) and one layer's attention scores, softmax
    weights and the copy handed to the caller (3 × heads × tokens², float32); nothing else is
    kept from layer to layer (no gradients, no cache). On SmolLM2 at 2,048 tokens this says
    1.5 GB; the process peaked at 1.85 GB with torch and transformers loaded."""
    params = sum(int(np.prod(e.shape)) for e in ckpt.tensors.values())
    return 2 * params * 4 + 3 * heads * tokens * tokens * 4


def check_memory(ckpt: Checkpoint, tokens: int, heads: int) -> None:
    need = needed_bytes(ckpt, tokens, heads)
    have = _available_bytes()
    if have is not None and need > have:
        raise CheckpointError(
            f"{ckpt.name}: running it on {tokens:,} tokens in float32 needs about "
            f"{need / 2**30:.1f} GiB of memory; {have / 2**30:.1f} GiB is available"
        )


def _quiet() -> None:
    """No progress bars or warnings from transformers: posecards says its own steps."""
    import transformers as T

    T.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    T.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]


def _gguf_file(ckpt: Checkpoint) -> tuple[str, str]:
    path = ckpt.weights[0]
    return str(path.parent), path.name


def _tokenizer_root(ckpt: Checkpoint) -> Path:
    return ckpt.root if ckpt.root.is_dir() else ckpt.root.parent


def check_tokenizer(ckpt: Checkpoint) -> None:
    """Raise CheckpointError where a Hugging Face folder has none of TOKENIZER_FILES
    (transformers 5 builds an empty tokenizer of the model's class where no files exist); a
    GGUF file carries its vocabulary. Reads no file: said before the model is read."""
    root = _tokenizer_root(ckpt)
    if ckpt.format != "gguf" and not any((root / f).is_file() for f in TOKENIZER_FILES):
        raise CheckpointError(
            f"{ckpt.name}: no tokenizer beside the model (none of {', '.join(TOKENIZER_FILES)}); "
            "--activations needs one to turn the text into tokens"
        )


def load_tokenizer(ckpt: Checkpoint) -> Any:
    """The model's own tokenizer (tokenizer files beside the model, or the GGUF's vocabulary)."""
    from transformers import AutoTokenizer

    _quiet()
    root = _tokenizer_root(ckpt)
    check_tokenizer(ckpt)
    try:
        if ckpt.format == "gguf":
            folder, name = _gguf_file(ckpt)
            return AutoTokenizer.from_pretrained(folder, gguf_file=name)
        return AutoTokenizer.from_pretrained(str(root), local_files_only=True)
    except Exception as exc:  # transformers raises many kinds for a tokenizer it cannot load
        raise CheckpointError(
            f"{ckpt.name}: transformers cannot load the tokenizer beside the model "
            f"({type(exc).__name__}); --activations needs one to turn the text into tokens"
        ) from None


def load_model(ckpt: Checkpoint) -> Any:
    """The model on the CPU in float32 with eager attention, built by transformers."""
    import torch
    import transformers as T

    _quiet()
    if ckpt.format == "gguf":
        from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

        folder, name = _gguf_file(ckpt)
        cfg = T.AutoConfig.from_pretrained(folder, gguf_file=name)
        with torch.device("meta"):
            shell = T.AutoModelForCausalLM.from_config(cfg)  # type: ignore[no-untyped-call]
        tensors = load_gguf_checkpoint(  # type: ignore[no-untyped-call]
            str(ckpt.weights[0]), return_tensors=True, model_to_load=shell
        )["tensors"]
        model = T.AutoModelForCausalLM.from_config(  # type: ignore[no-untyped-call]
            cfg, dtype=torch.float32, attn_implementation="eager"
        )
        missing, unexpected = model.load_state_dict(
            {k: v.to(torch.float32) for k, v in tensors.items()}, strict=False
        )
        tied = {"lm_head.weight"} if getattr(cfg, "tie_word_embeddings", False) else set()
        if set(missing) - tied or unexpected:
            raise CheckpointError(
                f"{ckpt.name}: transformers' GGUF loading left {len(set(missing) - tied)} "
                f"parameters unset and {len(unexpected)} unused"
            )
        model.tie_weights()
    else:
        root = ckpt.root if ckpt.root.is_dir() else ckpt.root.parent
        model = T.AutoModelForCausalLM.from_pretrained(
            str(root),
            local_files_only=True,
            dtype=torch.float32,
            attn_implementation="eager",
        )
    return model.eval()


def decoder_layers(model: Any) -> list[Any]:
    inner = getattr(model, "model", model)
    layers = getattr(inner, "layers", None)
    if layers is None:
        raise CheckpointError(
            f"{type(model).__name__} keeps no decoder layers at model.layers: posecards runs "
            "--activations on decoder-only models laid out like Llama"
        )
    return list(layers)


@contextlib.contextmanager
def _recording(model: Any, on_layer: OnLayer) -> Iterator[list[int]]:
    """Wrap the modeling module's eager kernel for one pass; yield the layers seen."""
    mod = sys.modules[type(model).__module__]
    kernel = getattr(mod, "eager_attention_forward", None)
    if kernel is None:
        raise CheckpointError(
            f"{type(model).__name__}'s modeling code has no eager_attention_forward to measure"
        )
    current: list[int | None] = [None]
    seen: list[int] = []

    def eager(module: Any, query: Any, key: Any, value: Any, *a: Any, **kw: Any) -> Any:
        out, weights = kernel(module, query, key, value, *a, **kw)
        layer = current[0]
        if layer is not None and weights is not None:
            seen.append(layer)
            on_layer(
                layer,
                query[0].transpose(0, 1).detach().numpy(),  # (tokens, heads, head_dim)
                key[0].transpose(0, 1).detach().numpy(),  # (tokens, kv_heads, head_dim)
                weights[0].detach().numpy(),  # (heads, tokens, tokens)
            )
        return out, weights

    hooks = []
    for i, layer in enumerate(decoder_layers(model)):

        def enter(_m: Any, _a: Any, __i: int = i) -> None:
            current[0] = __i

        hooks.append(layer.register_forward_pre_hook(enter))
    setattr(mod, "eager_attention_forward", eager)  # noqa: B010
    try:
        yield seen
    finally:
        setattr(mod, "eager_attention_forward", kernel)  # noqa: B010
        for h in hooks:
            h.remove()


def run_on_text(model: Any, token_ids: list[int], on_layer: OnLayer) -> list[int]:
    """One forward pass on ``token_ids``; ``on_layer`` gets each layer's q, k and weights.
    Returns the layers whose attention was measured, in order."""
    import torch

    ids = torch.tensor([token_ids], dtype=torch.long)  # (1, tokens)
    with torch.no_grad(), _recording(model, on_layer) as seen:
        model(input_ids=ids, use_cache=False)
    return seen
