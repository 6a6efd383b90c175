"""The published model configs card 6 reads (``posecards/data/configs/<slug>.json``).

Each file holds the position-related keys (and the sizes they depend on) of one ``config.json``
as published on the Hugging Face Hub, key for key; ``_name_or_path`` is the model id it came from.
Keys a published file leaves out get the default of transformers' config class for that
``model_type``; card 6 names those defaults beside the code that uses them, and
``tests/test_card6.py`` builds every file with transformers' ``AutoConfig.for_model`` and checks
that it reads the same values.

Plain Python (json, pathlib): the footer of a build reads the model ids without numpy.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

CONFIGS = Path(__file__).resolve().parent.parent / "data" / "configs"

# the files in the order the card shows them (panel 1 to 6)
SLUGS: tuple[str, ...] = (
    "phi-2",
    "qwen3-next-80b-a3b",
    "gemma-4-26b-a4b",
    "gemma-3-27b",
    "llama-4-scout",
    "smollm3-3b",
    "deepseek-v3",
    "qwen2.5-vl-7b",
    "qwen3-vl-8b",
)


# how the card names each model (its Hub id is in the footer and the alt text)
SHORT_NAMES: dict[str, str] = {
    "phi-2": "Phi-2",
    "qwen3-next-80b-a3b": "Qwen3-Next",
    "gemma-4-26b-a4b": "Gemma 4 26B",
    "gemma-3-27b": "Gemma 3 27B",
    "llama-4-scout": "Llama 4 Scout",
    "smollm3-3b": "SmolLM3",
    "deepseek-v3": "DeepSeek-V3",
    "qwen2.5-vl-7b": "Qwen2.5-VL",
    "qwen3-vl-8b": "Qwen3-VL",
}


def config_path(slug: str) -> Path:
    return CONFIGS / f"{slug}.json"


def config_files() -> tuple[Path, ...]:
    """Every config file card 6 reads (the build cache and ``--check`` hash them)."""
    return tuple(config_path(s) for s in SLUGS)


@cache
def published(slug: str) -> dict[str, Any]:
    """One published config as a dict (``_name_or_path``: the model id)."""
    if slug not in SLUGS:
        raise ValueError(f"unknown config {slug!r}; choose one of: {', '.join(SLUGS)}")
    data: dict[str, Any] = json.loads(config_path(slug).read_text(encoding="utf-8"))
    return data


def text_config(slug: str) -> dict[str, Any]:
    """The text model's keys: ``text_config`` where the file nests them (Gemma 3/4, Llama 4,
    Qwen3-VL), else the file itself (Qwen2.5-VL's published file is flat)."""
    cfg = published(slug)
    text: dict[str, Any] = cfg.get("text_config", cfg)
    return text


def model_id(slug: str) -> str:
    return str(published(slug)["_name_or_path"])


def model_ids() -> tuple[str, ...]:
    """The Hub ids of every config card 6 reads, in card order."""
    return tuple(model_id(s) for s in SLUGS)
