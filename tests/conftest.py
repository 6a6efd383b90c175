"""Test-wide settings: a private posecards cache per test session, and hypothesis profiles."""

from __future__ import annotations

import os
import tempfile

from hypothesis import settings

# The UMAP cache of a test run lives in its own folder (shared by the build subprocesses).
os.environ.setdefault("POSECARDS_CACHE_DIR", tempfile.mkdtemp(prefix="posecards-test-cache-"))
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile("ci", deadline=None, print_blob=True)
settings.load_profile("ci")
