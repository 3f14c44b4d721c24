"""Command-line tools, run as ``python -m lazynd.tools.<name>``."""
