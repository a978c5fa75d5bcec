"""Where work runs: a local process pool or Ray tasks (``executor``)."""
