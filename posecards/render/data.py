"""The numbers behind a figure as JSON or CSV (what `posecards data ID` prints)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Mapping
from typing import Any

import numpy as np


def _is_record(value: Any) -> bool:
    """A mapping or a dataclass instance: exported field by field (a figure's data may nest one)."""
    return isinstance(value, Mapping) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()] if value.ndim else _plain(value.item())
    if isinstance(value, (np.floating, float)):
        f = float(value)
        return f if np.isfinite(f) else str(f)
    if isinstance(value, (np.integer,)):
        return int(value)
    if _is_record(value):
        return {str(k): _plain(v) for k, v in fields_of(value).items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def fields_of(data: Any) -> Mapping[str, Any]:
    """A figure's data as its fields, in order: a mapping as it is, a dataclass field by field."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        return {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    fields: Mapping[str, Any] = data
    return fields


def to_json(data: Any) -> str:
    """All fields; arrays as nested lists, non-finite floats as strings ("-inf")."""
    return json.dumps(_plain(fields_of(data)), indent=1, ensure_ascii=False) + "\n"


def to_csv(data: Any) -> str:
    """Long format, one value per row: field, i, j, value (i, j empty where not applicable)."""
    values = fields_of(data)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["field", "i", "j", "value"])
    for name, value in values.items():
        arr = None if _is_record(value) else np.asarray(value)
        if arr is None:
            w.writerow([name, "", "", json.dumps(_plain(value), ensure_ascii=False)])
        elif arr.ndim == 0:
            w.writerow([name, "", "", _plain(arr)])
        elif arr.ndim == 1:
            for i, v in enumerate(arr.tolist()):
                w.writerow([name, i, "", _plain(v)])
        else:
            flat = arr.reshape(arr.shape[0], -1)
            for i in range(flat.shape[0]):
                for j in range(flat.shape[1]):
                    w.writerow([name, i, j, _plain(flat[i, j])])
    return buf.getvalue()
