"""Plain data: what a student's function may hand back to the grader, as JSON.

A hidden check calls the student's function in the kernel (``hidden``); the answer crosses
back as plain data only, so nothing of the student's making runs in the grader: no pickle,
no object of the student's class, no ``__eq__`` or ``__array_function__`` of theirs. The
kernel encodes (``encode``, run there on whatever the function returned, so its output is
untrusted); the grader reads the JSON (``read``) and decodes it (``decode``), which accepts
only this format:

- ``None``, ``bool``, ``int``, ``float`` and ``str`` as JSON has them (numpy scalars become
  these);
- ``{"list": [...]}``, ``{"tuple": [...]}``, ``{"set": [...]}`` and ``{"dict": [[key,
  value], ...]}`` (keys plain and hashable);
- ``{"array": {"dtype", "shape", "data"}}``: a numpy array of a builtin dtype (booleans,
  integers, floats, complex, fixed-width text), its bytes in base64; ``{"objects":
  {"shape", "items"}}``: an array of Python objects, each item plain;
- ``{"sparse": {"shape", "data", "indices", "indptr"}}``: a CSR matrix rebuilt from its arrays;
- ``{"series": {"index", "values", "name"}}`` and ``{"frame": {"index", "columns", "values"}}``:
  a pandas Series or DataFrame, as its index and its values.

Anything else is refused with ``PlainDataError``, which says what was found.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: Array kinds that cross: booleans, signed and unsigned integers, floats, complex, text.
ARRAY_KINDS = frozenset("biufcU")
#: How deep plain data may nest (a list of lists of ...): deeper is refused, not recursed into.
MAX_DEPTH = 20
#: The most bytes an answer may take as JSON (a hidden check's answers are small).
MAX_BYTES = 16 * 2**20
#: The most cells a sparse answer may span: a check may make it dense.
MAX_SPARSE_CELLS = 10**7
#: The most items a set or dict may hold: hashing colliding keys costs the square of their count.
MAX_HASHED = 10_000


class PlainDataError(ValueError):
    """What a student's function returned is not plain data (see the module docstring)."""


def encode(value: Any) -> Any:
    """``value`` as plain data, ready for JSON (run in the kernel on what a function returned).

    Raises
    ------
    PlainDataError
        If some part of ``value`` is not plain data; the message names its type.
    """
    return _encoded(value, 0)


def _encoded(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise PlainDataError(f"nested more than {MAX_DEPTH} levels deep")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic) and type(value).__module__ == "numpy":
        return _encoded(value.item(), depth)
    if type(value) in (list, tuple, set, frozenset):
        kinds: dict[type, str] = {list: "list", tuple: "tuple"}
        kind = kinds.get(type(value), "set")
        items = sorted(value, key=repr) if kind == "set" else value
        return {kind: [_encoded(item, depth + 1) for item in items]}
    if type(value) is dict:
        return {"dict": [[_encoded(k, depth + 1), _encoded(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, np.ndarray):
        return _array(value, depth)
    kind = _library_kind(value)
    if kind == "sparse":
        csr = value.tocsr()
        return {"sparse": {"shape": [int(n) for n in csr.shape], "data": _array(csr.data, depth),
                           "indices": _array(csr.indices, depth), "indptr": _array(csr.indptr, depth)}}
    if kind == "series":
        return {"series": {"index": _encoded(list(value.index), depth + 1),
                           "values": _array(value.to_numpy(), depth),
                           "name": _encoded(value.name, depth + 1)}}
    if kind == "frame":
        return {"frame": {"index": _encoded(list(value.index), depth + 1),
                          "columns": _encoded(list(value.columns), depth + 1),
                          "values": [_array(value[c].to_numpy(), depth) for c in value.columns]}}
    if kind == "index":
        return _encoded(list(value), depth)
    raise PlainDataError(f"a {type(value).__module__}.{type(value).__qualname__}")


def _library_kind(value: Any) -> str:
    """Which of the libraries' containers ``value`` is (by its exact type's module), or ""."""
    module, name = type(value).__module__, type(value).__name__
    if module.startswith("scipy.sparse") and hasattr(value, "tocsr"):
        return "sparse"
    if module == "pandas" or module.startswith("pandas."):
        return {"Series": "series", "DataFrame": "frame"}.get(name, "index" if name.endswith("Index") else "")
    return ""


def _array(value: np.ndarray, depth: int) -> dict:
    array = np.asarray(value).view(np.ndarray)  # a subclass's methods stay behind
    if array.dtype.kind == "O":
        return {"objects": {"shape": list(array.shape),
                            "items": [_encoded(item, depth + 1) for item in array.ravel().tolist()]}}
    if array.dtype.kind not in ARRAY_KINDS or array.dtype.fields is not None:
        raise PlainDataError(f"an array of dtype {array.dtype}")
    data = np.ascontiguousarray(array).tobytes()
    return {"array": {"dtype": array.dtype.str, "shape": list(array.shape),
                      "data": base64.b64encode(data).decode("ascii")}}


def read(text: Any) -> Any:
    """JSON text from the kernel, parsed (at most ``MAX_BYTES``).

    Raises
    ------
    PlainDataError
        If ``text`` is not JSON text, or too long.
    """
    if not isinstance(text, str) or len(text) > MAX_BYTES:
        raise PlainDataError("an answer too large, or not text")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:
        raise PlainDataError("an answer that is not JSON") from err


def decode(tree: Any) -> Any:
    """The value that plain data (``encode``'s format, parsed by ``read``) stands for.

    Raises
    ------
    PlainDataError
        If ``tree`` is not plain data in this module's format.
    """
    try:
        return _decoded(tree, 0)
    except PlainDataError:
        raise
    except (TypeError, ValueError, OverflowError, MemoryError, RecursionError) as err:
        raise PlainDataError(f"an answer the grader cannot rebuild ({type(err).__name__})") from err


def _decoded(tree: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise PlainDataError(f"nested more than {MAX_DEPTH} levels deep")
    if tree is None or type(tree) in (bool, int, float, str):
        return tree
    if type(tree) is not dict or len(tree) != 1:
        raise PlainDataError("an answer not in the plain data format")
    [(kind, body)] = tree.items()
    if kind in ("list", "tuple", "set") and type(body) is list:
        items = [_decoded(item, depth + 1) for item in body]
        builders: dict[str, Callable[[list], Any]] = {"list": list, "tuple": tuple, "set": _set}
        return builders[kind](items)
    if kind == "dict" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
        return _dict([(_decoded(k, depth + 1), _decoded(v, depth + 1)) for k, v in body])
    if kind == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if kind in ("array", "objects"):
        return _decoded_array(tree, depth)
    if kind == "sparse" and type(body) is dict:
        return _decoded_sparse(body, depth)
    if kind == "series" and type(body) is dict and set(body) == {"index", "values", "name"}:
        import pandas as pd
        return pd.Series(_decoded_array(body["values"], depth), index=_decoded(body["index"], depth + 1),
                         name=_decoded(body["name"], depth + 1))
    if kind == "frame" and type(body) is dict and set(body) == {"index", "columns", "values"}:
        import pandas as pd
        columns = _decoded(body["columns"], depth + 1)
        values = body["values"]
        if type(columns) is not list or type(values) is not list or len(columns) != len(values):
            raise PlainDataError("a table whose columns and values do not match")
        return pd.DataFrame({c: _decoded_array(v, depth) for c, v in zip(columns, values, strict=True)},
                            index=_decoded(body["index"], depth + 1))
    raise PlainDataError(f"an answer of an unknown kind ({str(kind)[:40]})")


def _set(items: list) -> set:
    if len(items) > MAX_HASHED:
        raise PlainDataError(f"a set of more than {MAX_HASHED} items")
    try:
        return set(items)
    except TypeError as err:
        raise PlainDataError("a set of unhashable items") from err


def _dict(pairs: list) -> dict:
    if len(pairs) > MAX_HASHED:
        raise PlainDataError(f"a dict of more than {MAX_HASHED} items")
    try:
        return dict(pairs)
    except TypeError as err:
        raise PlainDataError("a dict with unhashable keys") from err


def _shape(shape: Any) -> tuple[int, ...]:
    if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 32:
        raise PlainDataError("an array with a malformed shape")
    return tuple(shape)


def _decoded_array(tree: Any, depth: int) -> np.ndarray:
    if type(tree) is not dict or len(tree) != 1:
        raise PlainDataError("an array not in the plain data format")
    [(kind, body)] = tree.items()
    if kind == "objects" and type(body) is dict and type(body.get("items")) is list:
        shape = _shape(body.get("shape"))
        items = [_decoded(item, depth + 1) for item in body["items"]]
        if math.prod(shape) != len(items):
            raise PlainDataError("an array whose items do not fill its shape")
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array.reshape(shape)
    if kind != "array" or type(body) is not dict or set(body) != {"dtype", "shape", "data"}:
        raise PlainDataError("an array not in the plain data format")
    try:
        dtype = np.dtype(str(body["dtype"]))
        data = base64.b64decode(str(body["data"]), validate=True)
    except (TypeError, ValueError) as err:
        raise PlainDataError("an array with a malformed dtype or data") from err
    if dtype.kind not in ARRAY_KINDS or dtype.fields is not None or dtype.itemsize == 0:
        raise PlainDataError(f"an array of dtype {dtype}")
    shape = _shape(body["shape"])
    if math.prod(shape) * dtype.itemsize != len(data):
        raise PlainDataError("an array whose data does not fill its shape")
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


def _decoded_sparse(body: dict, depth: int) -> Any:
    import scipy.sparse as sparse
    if set(body) != {"shape", "data", "indices", "indptr"}:
        raise PlainDataError("a sparse matrix not in the plain data format")
    shape = _shape(body["shape"])
    parts = [_decoded_array(body[k], depth) for k in ("data", "indices", "indptr")]
    if len(shape) != 2 or math.prod(shape) > MAX_SPARSE_CELLS \
            or any(p.ndim != 1 or p.dtype.kind == "O" for p in parts) \
            or parts[1].dtype.kind not in "iu" or parts[2].dtype.kind not in "iu":
        raise PlainDataError("a sparse matrix not in the plain data format")
    try:
        matrix = sparse.csr_matrix(tuple(parts), shape=shape)
        matrix.check_format(full_check=True)
    except (TypeError, ValueError) as err:
        raise PlainDataError(f"a malformed sparse matrix ({err})") from err
    return matrix
