"""Render layer: card text, templates, whole cards, HTML, index and manifest."""
