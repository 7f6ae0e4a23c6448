"""A run's result tables as numpy columns, with pyarrow loaded only when a whole table is asked for.

The engine hands each table back as a ``dclb._core.ResultTable``: Arrow arrays that stay in the engine's
memory and that Python reads in one of two ways. The summary and the run's own checks read a few columns
as numpy arrays (the binding copies a column's values into bytes that :func:`numpy.frombuffer` views);
the store, and a caller who reads ``RunResult.flows``, get the whole table as a ``pyarrow.Table`` (pyarrow
adopts the engine's buffers). A run that stores nothing thus never imports pyarrow, whose shared libraries
are most of such a process's memory (docs/performance.md, "A lean process").

:func:`columns_of` gives the one interface the readers use, :class:`Columns`, for an engine table and for
any ``pyarrow.Table`` or pandas ``DataFrame`` (a table read back from the store, or built in a test). Both
give the same arrays for the same table: a float column's nulls read as NaN, a flag column's as False, a
text column is compared with ``equals``; an integer column keeps its integers (``ints``) or is converted
to float64 as a C cast does (``floats``), so every number a summary computes is the same whichever way
its table came.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Columns", "EngineTable", "ArrowTable", "columns_of"]


class Columns(Protocol):
    """Whole columns of one table as numpy arrays."""

    @property
    def num_rows(self) -> int: ...

    @property
    def column_names(self) -> list[str]: ...

    def floats(self, name: str) -> np.ndarray:
        """A numeric or flag column as float64; nulls are NaN."""
        ...

    def ints(self, name: str) -> np.ndarray:
        """An integer column as int64."""
        ...

    def bools(self, name: str) -> np.ndarray:
        """A flag column; nulls are False."""
        ...

    def equals(self, name: str, text: str) -> np.ndarray:
        """Rows of a text column equal to ``text``; nulls are not."""
        ...

    def to_arrow(self) -> "pa.Table":
        """The whole table as a pyarrow Table."""
        ...


class EngineTable:
    """A ``dclb._core.ResultTable``, read through numpy; pyarrow is imported by :meth:`to_arrow` alone."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self._values: dict[str, np.ndarray] = {}
        self._arrow: "pa.Table | None" = None
        self.column_names: list[str] = list(table.column_names)
        self.num_rows: int = int(table.num_rows)

    def __repr__(self) -> str:
        return f"EngineTable({self.num_rows} rows: {', '.join(self.column_names)})"

    def _raw(self, name: str) -> np.ndarray:
        """The column as the binding gives it (int64, float64 or bool), read once."""
        if name not in self._values:
            dtype, data = self._table.values(name)
            self._values[name] = np.frombuffer(data, dtype=np.dtype(dtype))
        return self._values[name]

    def floats(self, name: str) -> np.ndarray:
        return self._raw(name).astype(float, copy=False)

    def ints(self, name: str) -> np.ndarray:
        values = self._raw(name)
        if values.dtype.kind != "i":
            raise TypeError(f"result column {name!r} is {values.dtype}, not an integer column")
        return values

    def bools(self, name: str) -> np.ndarray:
        values = self._raw(name)
        return values if values.dtype == bool else values != 0

    def equals(self, name: str, text: str) -> np.ndarray:
        codes, texts = self._table.labels(name)
        if text not in texts:
            return np.zeros(self.num_rows, dtype=bool)
        return np.frombuffer(codes, dtype=np.dtype("=i4")) == texts.index(text)

    def to_arrow(self) -> "pa.Table":
        if self._arrow is None:
            import pyarrow as pa

            self._arrow = pa.Table.from_batches([self._table.to_pyarrow()])
        return self._arrow


class ArrowTable:
    """A pyarrow Table, read through ``pyarrow.compute`` (casts as Arrow defines them)."""

    def __init__(self, table: "pa.Table") -> None:
        self._table = table
        self.column_names: list[str] = list(table.column_names)
        self.num_rows: int = table.num_rows

    def __repr__(self) -> str:
        return f"ArrowTable({self.num_rows} rows: {', '.join(self.column_names)})"

    def floats(self, name: str) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        column = pc.cast(self._table.column(name), pa.float64(), safe=False)  # a long-lived size is not exact, nor needs to be
        return column.to_numpy(zero_copy_only=False).astype(float, copy=False)

    def ints(self, name: str) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        return pc.cast(self._table.column(name), pa.int64()).to_numpy(zero_copy_only=False)

    def bools(self, name: str) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        column = pc.fill_null(pc.cast(self._table.column(name), pa.bool_()), False)
        return column.to_numpy(zero_copy_only=False).astype(bool, copy=False)

    def equals(self, name: str, text: str) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        column = pc.cast(self._table.column(name), pa.string())
        return pc.fill_null(pc.equal(column, text), False).to_numpy(zero_copy_only=False).astype(bool)

    def to_arrow(self) -> "pa.Table":
        return self._table


def columns_of(table: Any) -> Columns:
    """The :class:`Columns` of an engine table, a pyarrow Table or a pandas DataFrame (a TypeError for
    anything else). The module of a table's type tells which it is, so that neither pyarrow nor pandas is
    imported to find out."""
    if isinstance(table, (EngineTable, ArrowTable)):
        return table
    package = type(table).__module__.split(".")[0]
    if package == "dclb" and type(table).__name__ == "ResultTable":
        return EngineTable(table)
    if package == "pyarrow" and type(table).__name__ == "Table":
        return ArrowTable(table)
    if package == "pandas":
        import pyarrow as pa

        return ArrowTable(pa.Table.from_pandas(table, preserve_index=False))
    raise TypeError(f"expected a pyarrow.Table or pandas.DataFrame, got {type(table).__name__}")
