"""Small labelled batches the metric tests score: class probabilities and binary F1 batches."""

from __future__ import annotations

import numpy as np

PROBS = np.array([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5], [0.25, 0.45, 0.3]], dtype=np.float32)
LABELS = np.array([1, 2, 2, 0], dtype=np.float32)


# predictions [1, 1] for labels [1, 0] (tp 1, fp 1), then [1, 0, 1] for [1, 1, 0] (tp 1, fp 1, fn 1)
F1_BATCHES = [
    (np.array([1, 0]), np.array([[0.2, 0.8], [0.3, 0.7]])),
    (np.array([1, 1, 0]), np.array([[0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])),
]
