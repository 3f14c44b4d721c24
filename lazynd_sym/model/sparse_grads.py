"""Where MXNet's row-sparse gradients would train differently from lazynd's dense ones.

An ``Embedding`` with ``sparse_grad=True`` gives MXNet a row-sparse weight gradient: the rows the
batch looked up.  An optimizer with ``lazy_update`` (SGD's and Adam's default) then changes those
rows only.  lazynd has no sparse storage: the same gradient is a dense array (zeros in the other
rows), and every row is updated, which is MXNet's result with ``lazy_update=False``.  Where that
changes rows the batch did not look up (weight decay, SGD's momentum, Adam's moments), the
training loops that create an optimizer say so once, naming the weights.
"""

from __future__ import annotations

from typing import Any

from lazynd import optimizer as opt_module
from lazynd.errors import LazyNDError
from lazynd.log import warn_from_user_code

__all__ = ["refuse_sparse_rows", "sparse_grad_weights", "warn_dense_row_sparse"]


def sparse_grad_weights(symbol: Any) -> list[str]:
    """The weight variables of ``symbol``'s ``Embedding`` layers with ``sparse_grad=True``."""
    names = set()
    for node in symbol._nodes():
        if node.op is not None and node.op.name == "Embedding" and node.attrs.get("sparse_grad"):
            weight = node.inputs[1][0]
            if weight.op is None:
                names.add(weight.name)
    return sorted(names)


def _moves_absent_rows(optimizer: Any) -> bool:
    """Whether a dense update with zero gradient rows changes those rows under ``optimizer``:
    always, but for plain SGD (no momentum, no weight decay), where it leaves them as they are."""
    if type(optimizer) is opt_module.SGD:  # NAG and other subclasses update otherwise
        return bool(getattr(optimizer, "momentum", 0.0) or optimizer.wd)
    return True


def warn_dense_row_sparse(symbol: Any, optimizer: Any, where: str) -> None:
    """Warn, naming the weights, when ``optimizer`` would update only a batch's rows in MXNet
    (``lazy_update`` on an Embedding's ``sparse_grad``) and updates every row here."""
    if symbol is None or not getattr(optimizer, "lazy_update", False) or not _moves_absent_rows(optimizer):
        return
    weights = sparse_grad_weights(symbol)
    if weights:
        warn_from_user_code(
            f"{where}: Embedding(sparse_grad=True) weights {weights} get dense gradients in lazynd, so "
            f"{type(optimizer).__name__} updates every row of them (weight decay and momentum reach rows "
            "the batch did not look up); MXNet's lazy_update changes only the batch's rows. Pass "
            "lazy_update=False for MXNet's dense update (lazynd's), or sparse_grad=False",
            UserWarning,
        )


def refuse_sparse_rows(sparse_row_id_fn: Any, what: str) -> None:
    """Raise :class:`~lazynd.errors.LazyNDError` naming ``what`` (a module loop: ``fit``, ``score``...)
    when ``sparse_row_id_fn`` is given: there are no row-sparse parameters to pull rows of."""
    if sparse_row_id_fn is not None:
        raise LazyNDError(
            f"{what}: sparse_row_id_fn pulls rows of row_sparse parameters, which lazynd does not have "
            "(its parameters are all dense): leave it None"
        )
