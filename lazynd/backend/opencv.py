"""OpenCV, imported on first use: image decoding and transforms need it, FullyConnected may use it.

``opencv-python-headless`` is a dependency, but ``import lazynd`` must neither fail
where it is broken or missing nor pay for importing it (about 0.1 s, more than the
rest of ``import lazynd``): only the code that needs it imports it, through
:func:`opencv` (which says how to install it) or :func:`opencv_or_none` (for code
that has a NumPy way too).
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_module: Any = None  # the cv2 module once imported; False once the import failed


def opencv_or_none() -> Any:
    """The ``cv2`` module, or None where it cannot be imported."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                try:
                    import cv2
                except ImportError:  # pragma: no cover - opencv-python-headless is a dependency
                    _module = False
                else:
                    _module = cv2
    return _module or None


def opencv() -> Any:
    """The ``cv2`` module; ImportError naming the package to install when it is missing."""
    cv2 = opencv_or_none()
    if cv2 is None:
        raise ImportError("lazynd needs OpenCV for this: pip install opencv-python-headless")
    return cv2
