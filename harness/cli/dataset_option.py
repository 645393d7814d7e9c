"""The `--dataset` option of the commands: a pinned name or a dataset file, loaded by the data stage
(harness.data.dataset); the data stage itself knows nothing of click."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from harness.data.dataset import PINNED_NAMES, Dataset, DatasetError, load_dataset, resolve

HELP = (
    "Cases to use: a pinned name (" + ", ".join(PINNED_NAMES) + ") or a CSV/Parquet file in the MedCalc-Bench schema."
)


class DatasetParam(click.ParamType):
    """Click type: a pinned name or a CSV/Parquet path; loads the Dataset (or passes the string)."""

    name = "dataset"

    def __init__(self, load: bool = True) -> None:
        self.load = load

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Dataset):
            return value
        try:
            if self.load:
                return load_dataset(value)
            resolve(value)
            return str(value)
        except DatasetError as exc:
            self.fail(str(exc), param, ctx)


def dataset_option(
    *param_decls: str, default: str = "bundled-test", load: bool = True, **kwargs: Any
) -> Callable[[Callable], Callable]:
    """Reusable `--dataset` option: a pinned name (bundled-test, one-shot, dev, verified) or a path.

    The command receives a loaded `Dataset` (or the validated string when load=False).
    """
    decls = param_decls or ("--dataset", "dataset")
    kwargs.setdefault("help", f"{HELP} [default: {default}]")
    return click.option(*decls, type=DatasetParam(load=load), default=default, show_default=False, **kwargs)
