"""Evaluation metrics (``mx.metric``): accumulate a score over batches.

Labels and predictions arrive as lists of NDArrays (or NumPy arrays); the
scores are summed on the host in float64 so that sums over an epoch do not
drift (a batch's loss or error in its outputs' precision, as MXNet's).  ``base`` holds ``EvalMetric`` and the registry; ``classification``,
``regression`` and ``loss`` the metrics of each kind; ``composite`` the
metrics made of others or of a function, and ``create``.
"""

from __future__ import annotations

from .base import EvalMetric, check_label_shapes, register
from .classification import F1, MCC, PCC, Accuracy, TopKAccuracy
from .composite import CompositeEvalMetric, CustomMetric, create, np
from .loss import Caffe, CrossEntropy, Loss, NegativeLogLikelihood, Perplexity, Torch
from .regression import MAE, MSE, RMSE, PearsonCorrelation

__all__ = [
    "EvalMetric",
    "register",
    "create",
    "check_label_shapes",
    "CompositeEvalMetric",
    "Accuracy",
    "TopKAccuracy",
    "F1",
    "MCC",
    "PCC",
    "MSE",
    "MAE",
    "RMSE",
    "PearsonCorrelation",
    "CrossEntropy",
    "NegativeLogLikelihood",
    "Perplexity",
    "Loss",
    "Torch",
    "Caffe",
    "CustomMetric",
    "np",
]
