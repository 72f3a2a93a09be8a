"""The version of ragingest (one place: the package, the file states and the docs read it)."""

__version__ = "0.1.0"
