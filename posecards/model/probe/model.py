"""The text model of a config, as transformers builds it: where the text config is nested, the
model class that takes it, the model built with its parameters on the meta device (its rotary
modules on the CPU), its decoder layers, and the position tables or biases it holds."""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import linecache
import sys
from collections.abc import Iterator
from typing import Any

from posecards.model.probe.types import ProbeError

# the keys under which composite configs nest the model that reads text, in the order tried
_NESTED = (
    "text_config",
    "language_config",
    "llm_config",
    "thinker_config",
    "decoder",
    "decoder_config",
    "vlm_config",
    "generator",
    "text_encoder",
)


def model_class(text: Any) -> type | None:
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    found: Any
    try:
        found = MODEL_MAPPING[type(text)]
    except (KeyError, ValueError):
        found = None
    if isinstance(found, tuple | list):
        found = found[0]
    if found is not None:
        return found  # type: ignore[no-any-return]
    # a text model that AutoModel does not list (Qwen2.5-Omni's thinker): the class of its module
    # that takes this config class
    module_name = type(text).__module__.replace(".configuration_", ".modeling_")
    try:
        mod = importlib.import_module(module_name)
    except ImportError:
        return None
    from transformers import PreTrainedModel

    found = [
        obj
        for name, obj in vars(mod).items()
        if isinstance(obj, type)
        and issubclass(obj, PreTrainedModel)
        and getattr(obj, "config_class", None) is type(text)
        and name.endswith("Model")
        and "For" not in name
    ]
    found.sort(key=lambda c: (not c.__name__.endswith("TextModel"), c.__name__))
    return found[0] if found else None


def text_config(cfg: Any) -> tuple[Any, tuple[str, ...]]:
    """The config of the model that reads text: the outer config, or one nested under a key."""
    from transformers import PreTrainedConfig

    path: tuple[str, ...] = ()
    node = cfg
    for _ in range(4):
        nested = [k for k in _NESTED if isinstance(getattr(node, k, None), PreTrainedConfig)]
        if not nested:
            break
        node, path = getattr(node, nested[0]), (*path, nested[0])
    return node, path


@functools.cache
def _computes_inv_freq(init: Any) -> bool:
    """Whether an ``__init__``'s source names ``inv_freq`` (read once per function; a function
    of a file that nowhere names it is not cut out of the file)."""
    try:
        lines = linecache.getlines(inspect.getsourcefile(init) or "")
        if lines and "inv_freq" not in "".join(lines):
            return False
        return "inv_freq" in inspect.getsource(init)
    except (OSError, TypeError):
        return False


@contextlib.contextmanager
def rotary_on_cpu(modules: list[Any]) -> Iterator[None]:
    """Every class of ``modules`` whose ``__init__`` computes ``inv_freq`` builds on the CPU."""
    import torch

    patched: list[tuple[type, Any]] = []
    for mod in modules:
        for obj in list(vars(mod).values()):
            if not isinstance(obj, type) or not issubclass(obj, torch.nn.Module):
                continue
            if obj.__module__ != mod.__name__ or "__init__" not in vars(obj):
                continue
            init = obj.__init__
            if not _computes_inv_freq(init):
                continue

            def cpu_init(self: Any, *a: Any, __init: Any = init, **kw: Any) -> None:
                with torch.device("cpu"):
                    __init(self, *a, **kw)

            patched.append((obj, init))
            obj.__init__ = cpu_init  # type: ignore[method-assign]
    try:
        yield
    finally:
        for obj, init in patched:
            obj.__init__ = init  # type: ignore[misc]


def modeling_modules(cls: type) -> list[Any]:
    names = {c.__module__ for c in cls.__mro__ if c.__module__.startswith("transformers.models.")}
    return [sys.modules[n] for n in sorted(names)]


def decoder_layers(model: Any, n: int | None) -> list[Any]:
    import torch

    lists = [
        m
        for m in model.modules()
        if isinstance(m, torch.nn.ModuleList) and len(m) > 0 and (n is None or len(m) == n)
    ]
    if not lists:
        raise ProbeError(f"no list of {n} decoder layers in {type(model).__name__}")
    return list(lists[0])


_RELATIVE = (
    "relative_attention_bias",
    "rel_embeddings",
    "relative_position",
    "rel_pos",
    "pos_bias",
)


def learned_tables(model: Any) -> tuple[str, ...]:
    """Embedding tables indexed by position (``position_embeddings``, ``wpe``, ``embed_positions``)."""
    import torch

    out = []
    for name, m in model.named_modules():
        leaf = name.rsplit(".", 1)[-1].lower()
        if (
            type(m) is torch.nn.Embedding
            and (  # not a subclass (RoFormer's sinusoid table)
                "position" in leaf or leaf in ("wpe", "pos_emb", "embed_positions")
            )
            and not any(r in name.lower() for r in _RELATIVE)
        ):
            out.append(f"{name} ({m.num_embeddings} x {m.embedding_dim})")
    return tuple(out)


def absolute_positions(model: Any, decoder: list[Any]) -> tuple[str, ...]:
    """Other places position may enter outside the decoder layers: modules, buffers or
    parameters whose name speaks of position (a sinusoid table, a learned table, ...)."""
    inside = {id(m) for layer in decoder for m in layer.modules()}
    out = []
    for name, m in model.named_modules():
        if id(m) in inside or any(
            n.endswith("inv_freq") for n, _ in m.named_buffers(recurse=False)
        ):
            continue
        leaf = name.rsplit(".", 1)[-1].lower()
        if "pos" in leaf and "rotary" not in leaf and "rope" not in leaf:
            out.append(name)
        for b, _ in [*m.named_buffers(recurse=False), *m.named_parameters(recurse=False)]:
            if "pos" in b.lower() and not b.endswith("inv_freq") and "position_ids" not in b:
                out.append(f"{name}.{b}" if name else b)
    return tuple(out)


def relative_modules(model: Any) -> tuple[str, ...]:
    return tuple(
        name for name, _ in model.named_modules() if any(r in name.lower() for r in _RELATIVE)
    )


def no_rotary_position(model: Any, modules: list[Any]) -> str | None:
    """A model with no rotary code at all: what it adds position by, when posecards measures it
    (``"learned"``: tables added to its input; ``"bias"``: T5-style relative biases), or a
    refusal said before running it (another relative position scheme). None: rotary code."""
    from posecards.model.probe.tables import bias_modules, learned_modules

    rotary = any(
        n.endswith("inv_freq") for m in model.modules() for n, _ in m.named_buffers(recurse=False)
    ) or any(name.startswith("apply_rotary") for mod in modules for name in vars(mod))
    if rotary:
        return None
    relative = relative_modules(model)
    t5 = {f"{name}.relative_attention_bias" for name, _ in bias_modules(model)}
    if relative and t5 and set(relative) <= t5 and not learned_modules(model):
        return "bias"
    if relative:
        other = next((r for r in relative if r not in t5), relative[0])
        raise ProbeError(
            f"{type(model).__name__} puts position inside attention through {other} "
            "(relative position): posecards inspect does not draw that yet"
        )
    return "learned" if learned_modules(model) else None
