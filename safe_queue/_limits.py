"""Temporary alias of :mod:`safe_queue.engine.limits` while the modules move."""

from safe_queue.engine.limits import *  # noqa: F403
