"""The math layer: pure float64 positional-encoding functions (no plotting, no templating).

Public names are re-exported lazily from ``posecards`` (see ``posecards/__init__.py``).
"""
