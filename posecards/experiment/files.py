"""Where card 5's data files are (no heavy imports: the build cache hashes them).

- the measurements: ``posecards/data/measurements.json`` (made by `posecards measure` with the
  defaults), or ``POSECARDS_MEASUREMENTS=FILE``;
- the quoted numbers: ``posecards/data/quoted.toml`` (published tables, with their citation).
"""

from __future__ import annotations

import os
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
SHIPPED = DATA / "measurements.json"
QUOTED = DATA / "quoted.toml"
ENV = "POSECARDS_MEASUREMENTS"


def measurements_path() -> Path:
    own = os.environ.get(ENV)
    return Path(own) if own else SHIPPED
