"""The launcher kinds by name (`--launcher`, `LAUNCHER=`): one `Registry` of `Launcher` classes, like the arms and the
tables. Each class is its kind (harness.model.serving): the rest of the kit looks a kind up here and asks it; nothing
outside a launcher class compares launcher names.

    LAUNCHERS["vllm"]                  # the class, VllmLauncher
    launcher_kind("tgi")               # LauncherSettingsError: unknown launcher 'tgi'; known launchers: vllm, ...

A study registers its own kind for a block (`with registered(MyLauncher): ...`); the kit's five are frozen.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from harness.core.registry import Registry
from harness.model.endpoint import ExternalLauncher
from harness.model.llama_cpp import LlamaCppLauncher
from harness.model.rehearsal.launcher import RehearsalLauncher
from harness.model.serving import Launcher, LauncherSettingsError
from harness.model.vllm.cpu import VllmCpuLauncher
from harness.model.vllm.launcher import VllmLauncher

__all__ = ["LAUNCHERS", "launcher_kind", "registered"]

LAUNCHERS: Registry[type[Launcher]] = Registry("launcher", Launcher, classes=True, name_of=lambda cls: cls.name)
for _kind in (VllmLauncher, VllmCpuLauncher, LlamaCppLauncher, RehearsalLauncher, ExternalLauncher):
    LAUNCHERS.register(_kind)
LAUNCHERS.freeze()


def launcher_kind(name: str) -> type[Launcher]:
    """The launcher class registered under `name`; LauncherSettingsError naming the known ones."""
    try:
        return LAUNCHERS.lookup(name)
    except ValueError as exc:
        raise LauncherSettingsError(str(exc)) from None


@contextmanager
def registered(kind: type[Launcher]) -> Iterator[type[Launcher]]:
    """A launcher kind of a study or a test, registered for the block."""
    LAUNCHERS.register(kind)
    try:
        yield kind
    finally:
        LAUNCHERS.unregister(kind.name)
