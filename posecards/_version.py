"""The single source of the package version (pyproject reads it through hatch)."""

__version__ = "0.1.0"
