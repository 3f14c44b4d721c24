"""OpenCV, imported once for the image functions: :func:`opencv` returns it, or says how to install it.

``opencv-python-headless`` is a dependency, but ``import lazynd`` must not fail
where it is broken or missing: only the functions that need it do.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

cv2: ModuleType | None
try:
    import cv2
except ImportError:  # pragma: no cover - opencv-python-headless is a dependency
    cv2 = None


def opencv() -> Any:
    """The ``cv2`` module; ImportError naming the package to install when it is missing."""
    if cv2 is None:
        raise ImportError("lazynd.image needs OpenCV: pip install opencv-python-headless")
    return cv2
