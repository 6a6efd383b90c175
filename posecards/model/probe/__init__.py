"""What the installed transformers itself does with a config, read from its own objects.

``probe(config)`` loads the config with the installed transformers (``AutoConfig.for_model``:
local data only, never remote code), finds the text model's config wherever it is nested, builds
that model with every parameter on the ``meta`` device (no weights, no initialisation; a module
whose ``__init__`` computes rotary frequencies runs on the CPU, with the arguments transformers
gives it), and runs the model's own ``forward`` once on meta tensors with recorders in place
(first with its layer norms handing their input on, which keeps every shape and costs a third
of the pass less; the model as it is where that pass fails):

- each rotary module's ``forward`` runs on the CPU (its real frequencies), hands meta tensors on,
  and remembers which cos/sin tensors it made for which key (``rope`` or the layer type);
- every ``apply_rotary*`` function of the modeling modules is replaced by a recorder: the decoder
  layer it is called in rotates q and k, with the cos/sin of that key; its arguments are kept,
  and the real function is applied afterwards on the CPU (cos 0, sin 1: a quarter turn) to a
  random q to measure which slot turns with which (the pair layout, measured not named);
- the attention kernel (``eager_attention_forward``) records the softmax scale and the mask it
  is handed; the mask functions (``create_causal_mask``, ``create_sliding_window_causal_mask``,
  ``create_chunked_causal_mask``) tag the masks they return with the window they read.

The pass runs under ``meta_ops`` (each meta op's output shapes computed once per pass: most of
a pass was torch's Python meta kernels, the same ops on the same shapes in every layer) and torch
on one thread (its CPU work is small tensors); the whole probe without automatic garbage
collection (its model's objects made the collector scan the whole process again and again).

MRoPE axes come from driving the rotary module with one position row at a time. Nothing here
guesses: whatever transformers cannot build or run, or this probe cannot follow, is a
``ProbeError`` with one line that says so.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from posecards.garbage import no_automatic_collection
from posecards.model.probe import model as M
from posecards.model.probe import record as R
from posecards.model.probe.reading import reading
from posecards.model.probe.tables import measure_biases, measure_tables
from posecards.model.probe.types import (
    ProbedBias,
    ProbedLayer,
    ProbedRope,
    ProbedTable,
    ProbeError,
    ProbeReading,
)
from posecards.torch_threads import one_torch_thread

__all__ = [
    "ProbeError",
    "ProbeReading",
    "ProbedBias",
    "ProbedLayer",
    "ProbedRope",
    "ProbedTable",
    "probe",
    "transformers_available",
]


def transformers_available() -> bool:
    """Whether transformers can be imported (POSECARDS_NO_TRANSFORMERS=1: read by the table)."""
    import os

    if os.environ.get("POSECARDS_NO_TRANSFORMERS") == "1":
        return False
    try:
        importlib.import_module("transformers")
    except ImportError:
        return False
    return True


def probe(config: Mapping[str, Any]) -> ProbeReading:
    """transformers' own reading of ``config`` (a config.json dict with its ``model_type``)."""
    stage = ["build"]
    try:
        with one_torch_thread(), no_automatic_collection():
            return _probe(config, stage)
    except ProbeError:
        raise
    except Exception as exc:
        import transformers as T

        first = (str(exc).strip().splitlines() or [""])[0][:200]
        what = f"{type(exc).__name__}: {first}"
        if stage[0] == "build":  # transformers' own error: it cannot build this config
            raise ProbeError(
                f"transformers {T.__version__} cannot build this config ({what})"
            ) from exc
        raise ProbeError(  # the model was built; running it without weights failed
            f"transformers {T.__version__}'s {stage[0]} failed when run without weights "
            f"(on meta tensors: {what})"
        ) from exc


def _probe(config: Mapping[str, Any], stage: list[str]) -> ProbeReading:
    import torch
    import transformers as T
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    T.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    cfg_json = dict(config)
    model_type = cfg_json.pop("model_type", None)
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING:
        raise ProbeError(
            f"model_type {model_type!r} is not a model type of transformers {T.__version__}"
        )
    cfg = T.AutoConfig.for_model(model_type, **cfg_json)
    text, path = M.text_config(cfg)
    cls = M.model_class(text)
    if cls is None:
        raise ProbeError(
            f"transformers {T.__version__} has no model class for {type(text).__name__}"
        )
    text._attn_implementation = "eager"
    if hasattr(text, "_experts_implementation"):
        text._experts_implementation = "eager"
    from transformers.initialization import no_init_weights

    modules = M.modeling_modules(cls)
    # no initialisation of meta parameters (torch's init functions on meta tensors are Python,
    # and the values are not there); the rotary modules' buffers are what their __init__ makes
    with M.rotary_on_cpu(modules), torch.device("meta"), no_init_weights():
        model = cls(text)
    model.eval()
    stage[0] = type(model).__name__
    scheme = M.no_rotary_position(model, modules)
    if scheme is not None:
        # no rotary code: the rows a learned table reads, or a relative bias's buckets, measured
        if "input_ids" not in inspect.signature(model.forward).parameters:
            raise ProbeError(
                f"{type(model).__name__} is not a text model (its forward takes no input_ids)"
            )
        return ProbeReading(
            transformers_version=T.__version__,
            model_type=str(getattr(text, "model_type", "")),
            text_path=path,
            model_class=cls.__name__,
            layers=(),
            rope={},
            config=text,
            tables=measure_tables(cls, text) if scheme == "learned" else (),
            biases=measure_biases(cls, text) if scheme == "bias" else (),
        )
    n_layers = getattr(text, "num_hidden_layers", None)
    decoder = M.decoder_layers(model, n_layers)
    # the passes tried, in order: the model as it is, then with the feed-forward blocks bypassed
    # (mixtures of experts route by data: no meta kernel; they decide nothing about position;
    # some return (hidden, router scores)); each first without the norms (R.norms_bypassed: the
    # cheap pass), then with them
    passes: list[Callable[[], list[contextlib.AbstractContextManager[None]]]] = [
        lambda: [R.norms_bypassed(model)],
        lambda: [R.norms_bypassed(model), R.feed_forward_bypassed(decoder, False)],
        lambda: [R.norms_bypassed(model), R.feed_forward_bypassed(decoder, True)],
        lambda: [],
        lambda: [R.feed_forward_bypassed(decoder, False)],
        lambda: [R.feed_forward_bypassed(decoder, True)],
    ]
    for i, extra in enumerate(passes):
        rec = R.Recorder()
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(R.recording(model, decoder, modules, rec))
                for cm in extra():
                    stack.enter_context(cm)
                R.forward_pass(model, text)
            break
        except Exception:
            if i == len(passes) - 1:
                raise
    return reading(T.__version__, text, path, cls, model, decoder, rec)
