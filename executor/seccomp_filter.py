"""Layer 4: the per-child seccomp filter (built once in the supervisor) and the kill-action probe.

The filter is default-deny: every system call not in ``policy.CHILD_SYSCALLS`` kills the child.
Two calls carry argument rules: ``write`` only to ``policy.RESULT_FD`` and ``mmap`` only without
``PROT_EXEC``. The supervisor builds the filter object before it forks anything; each child calls
``load()`` after its imports, limits and the compile step, before the program's code runs.

Kill action: ``SCMP_ACT_KILL_PROCESS`` where the kernel supports it. gVisor releases that refuse
it with EINVAL get ``SCMP_ACT_KILL_THREAD``, which kills a single-threaded child just as well
(the child cannot create threads: ``clone`` is not allowed). ``probe_kill_action()`` decides by
trying, in a throw-away child, and *proves* that the chosen action kills: the probe child loads
the filter, makes a forbidden call (``getuid``) and must die by a signal. The result (action name,
signal observed) is reported in the supervisor's ready line under ``selftest.seccomp``.

The library is pyseccomp (ctypes over libseccomp2); the Debian ``python3-seccomp`` module, which
has the same API, is used when pyseccomp is absent.
"""
from __future__ import annotations

import errno
import mmap
import os

from executor import policy

try:  # pragma: no cover - which binding is present depends on the image
    import pyseccomp as seccomp  # type: ignore
except ImportError:  # pragma: no cover
    import seccomp  # type: ignore

KILL_ACTIONS: dict[str, int] = {"KILL_PROCESS": seccomp.KILL_PROCESS, "KILL_THREAD": seccomp.KILL_THREAD}
_PROBE_LOAD_EINVAL = 71
_PROBE_LOAD_OTHER = 72
_PROBE_SURVIVED = 73


def build_child_filter(action: str = "KILL_PROCESS"):
    """The per-child SyscallFilter with default action ``action`` (not yet loaded)."""
    if action not in KILL_ACTIONS:
        raise ValueError(f"unknown seccomp kill action {action!r}; known: {', '.join(KILL_ACTIONS)}")
    flt = seccomp.SyscallFilter(defaction=KILL_ACTIONS[action])
    for name in policy.CHILD_SYSCALLS:
        if name == "write":
            flt.add_rule(seccomp.ALLOW, "write", seccomp.Arg(0, seccomp.EQ, policy.RESULT_FD))
        elif name == "mmap":
            flt.add_rule(seccomp.ALLOW, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, mmap.PROT_EXEC, 0))
        else:
            flt.add_rule(seccomp.ALLOW, name)
    return flt


def probe_kill_action(preferred: tuple[str, ...] = ("KILL_PROCESS", "KILL_THREAD")) -> dict:
    """Find the first kill action that loads *and* kills; returns
    ``{"action", "signal", "tried": [...]}`` or ``{"action": None, "error", "tried"}``."""
    tried = []
    for action in preferred:
        try:  # libseccomp may refuse the action up front (gVisor: KILL_PROCESS -> EINVAL)
            flt = build_child_filter(action)
        except OSError as exc:
            tried.append({"action": action, "result": f"filter build failed: {exc}"})
            continue
        pid = os.fork()
        if pid == 0:  # probe child: no Python-level cleanup, only _exit
            try:
                try:
                    flt.load()
                except OSError as exc:
                    os._exit(_PROBE_LOAD_EINVAL if exc.errno == errno.EINVAL else _PROBE_LOAD_OTHER)
                os.getuid()  # forbidden: must kill us
                os._exit(_PROBE_SURVIVED)
            except BaseException:
                os._exit(_PROBE_LOAD_OTHER)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            tried.append({"action": action, "result": f"killed by signal {sig}"})
            return {"action": action, "signal": sig, "tried": tried}
        code = os.WEXITSTATUS(status)
        reason = {_PROBE_LOAD_EINVAL: "load failed with EINVAL", _PROBE_LOAD_OTHER: "load failed",
                  _PROBE_SURVIVED: "forbidden call did not kill"}.get(code, f"exit code {code}")
        tried.append({"action": action, "result": reason})
    return {"action": None, "error": "no seccomp kill action both loads and kills", "tried": tried}


def docker_profile_json() -> str:
    """The container-wide docker seccomp profile (rendered from policy.py)."""
    return policy.seccomp_profile_json()
