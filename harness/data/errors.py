"""The one error a dataset problem raises: DatasetError, locating the file, row and column at fault."""

from __future__ import annotations

import os
from typing import Any


class DatasetError(ValueError):
    """A dataset file is missing, unreadable or breaks the benchmark schema.

    Attributes `file`, `row` (1-based data row, header excluded), `row_number` (the row's "Row Number"
    value when known) and `column` locate the problem; the message always names the ones that are set.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | os.PathLike | None = None,
        row: int | None = None,
        row_number: Any = None,
        column: str | None = None,
    ) -> None:
        self.file = str(file) if file is not None else None
        self.row = row
        self.row_number = row_number
        self.column = column
        self.problem = message
        where = []
        if self.file is not None:
            where.append(self.file)
        if row is not None:
            r = f"row {row}"
            if row_number not in (None, ""):
                r += f" (Row Number {row_number})"
            where.append(r)
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
