"""The distribution's version: one leaf module, read by packaging and every surface."""

__version__ = "0.2.0.dev0"
