"""Names of a model and its tensors as they appear in file names and on a card."""

from __future__ import annotations

import re


def model_slug(name: str) -> str:
    """A file-name-safe form of a model name: 'Llama-3.1 8B' -> 'llama-3-1-8b'."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:60].strip("-") or "model"


def display_name(name: str) -> str:
    """A model or tensor name as printed on a card: characters other than letters, digits and
    ``._+-/`` (matplotlib reads '$' as math) become '_'; at most 60 characters."""
    safe = re.sub(r"[^A-Za-z0-9._+\-/]", "_", name)
    return safe if len(safe) <= 60 else safe[:57] + "..."
