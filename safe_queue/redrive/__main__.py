"""``python -m safe_queue.redrive QUEUE ...``: the same as ``safe-queue redrive``."""

from safe_queue.redrive import main_entry

main_entry()
