"""Layer 4: the per-child seccomp filter, compiled once by the supervisor's loop, and the
kill-action probe.

The filter is default-deny: every system call not in ``policy.CHILD_SYSCALLS`` kills the child.
Two calls carry argument rules: ``write`` only to ``policy.RESULT_FD`` and ``mmap`` only without
``PROT_EXEC``.

Where the work happens: pyseccomp (ctypes over libseccomp2) compiles the rules to a classic BPF
program *in the loop process* (``compile_child_filter``); the zygote and every child only hold
the BPF bytes (``BpfFilter``). The zygote sets ``prctl(PR_SET_NO_NEW_PRIVS)`` once on itself
(``set_no_new_privs``; irreversible, inherited by every child, and harmless to a process that
never execs). A spare, ahead of demand, reads it back (``prepare``: the child refuses to run if
it is not set, and the call faults in the ctypes call path, which under gVisor's ptrace platform
cost 3-4 ms per child when it happened on the request path: issue 25). Each child then installs
its own filter with one ``prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)`` after the compile step,
before the program's code runs. (pyseccomp finds libseccomp by running
``ldconfig -p``, which imports ``subprocess``; a zygote in that state made each child's
fork/exit/wait under gVisor 13 ms instead of 6 ms, so pyseccomp stays out of the zygote.)

Kill action: ``SCMP_ACT_KILL_PROCESS`` where the kernel supports it. gVisor releases that refuse
it with EINVAL get ``SCMP_ACT_KILL_THREAD``, which kills a single-threaded child just as well
(the child cannot create threads: ``clone`` is not allowed). ``probe_kill_action()`` decides by
trying, in a throw-away child that installs the BPF exactly as a program's child does, and
*proves* that the chosen action kills: the probe loads the filter, makes a forbidden call
(``getuid``) and must die by a signal. The result (action name, signal observed) is reported in
the supervisor's ready line under ``selftest.seccomp``.

The Debian ``python3-seccomp`` module, which has the same API, is used when pyseccomp is absent.
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os

from executor import policy

# names for the type checker only: the zygote imports this module, and typing stays out of its
# children's module table (as in child.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KILL_ACTIONS: tuple[str, ...] = ("KILL_PROCESS", "KILL_THREAD")
_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_NO_NEW_PRIVS = 39
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_BPF_INSN_BYTES = 8
_PROBE_LOAD_EINVAL = 71
_PROBE_LOAD_OTHER = 72
_PROBE_SURVIVED = 73


def _binding() -> Any:  # the pyseccomp (or seccomp) module: it has no stubs
    try:  # pragma: no cover - which binding is present depends on the image
        import pyseccomp as seccomp
    except ImportError:  # pragma: no cover
        import seccomp
    return seccomp


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class BpfFilter:
    """A compiled child filter: the BPF bytes and ``load()`` (prctl through ctypes)."""

    def __init__(self, bpf: bytes, action: str):
        if not bpf or len(bpf) % _BPF_INSN_BYTES:
            raise ValueError(f"seccomp BPF program has {len(bpf)} bytes, not a positive multiple of 8")
        self.bpf = bytes(bpf)
        self.action = action
        self._buffer = ctypes.create_string_buffer(self.bpf, len(self.bpf))
        self._prog = _SockFprog(len(self.bpf) // _BPF_INSN_BYTES, ctypes.addressof(self._buffer))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl
        self._prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong)
        self._prepared = False

    def set_no_new_privs(self) -> None:
        """Set no_new_privs on this process (the zygote, once). OSError on failure."""
        if self._prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")

    def prepare(self) -> None:
        """Ahead of ``load``, in the same process: no_new_privs must already be set (inherited
        from the zygote); RuntimeError if not. Leaves ``load`` one system call."""
        state = self._prctl(_PR_GET_NO_NEW_PRIVS, 0, None, 0, 0)
        if state != 1:
            raise RuntimeError(f"no_new_privs is not set in the child (prctl returned {state})")
        self._prepared = True

    def load(self) -> None:
        """Install the filter in this process (irreversible). OSError on failure. Sets
        no_new_privs first unless ``prepare`` found it set."""
        if not self._prepared:
            self.set_no_new_privs()
        if self._prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(self._prog), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")


def compile_child_filter(action: str = "KILL_PROCESS") -> BpfFilter:
    """The per-child filter with default action ``action``, compiled to BPF by libseccomp."""
    flt = build_child_filter(action)
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(write_end, "wb", closefd=True) as w:
            flt.export_bpf(w)
        chunks = []
        while True:
            block = os.read(read_end, 65536)
            if not block:
                break
            chunks.append(block)
    finally:
        os.close(read_end)
    return BpfFilter(b"".join(chunks), action)


def build_child_filter(action: str = "KILL_PROCESS") -> Any:  # seccomp.SyscallFilter: the binding has no stubs
    """The per-child libseccomp SyscallFilter with default action ``action`` (not loaded)."""
    if action not in KILL_ACTIONS:
        raise ValueError(f"unknown seccomp kill action {action!r}; known: {', '.join(KILL_ACTIONS)}")
    seccomp = _binding()
    flt = seccomp.SyscallFilter(
        defaction={"KILL_PROCESS": seccomp.KILL_PROCESS, "KILL_THREAD": seccomp.KILL_THREAD}[action]
    )
    for name in policy.CHILD_SYSCALLS:
        if name == "write":
            flt.add_rule(seccomp.ALLOW, "write", seccomp.Arg(0, seccomp.EQ, policy.RESULT_FD))
        elif name == "mmap":
            flt.add_rule(seccomp.ALLOW, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, mmap.PROT_EXEC, 0))
        else:
            flt.add_rule(seccomp.ALLOW, name)
    return flt


def probe_kill_action(preferred: tuple[str, ...] = ("KILL_PROCESS", "KILL_THREAD")) -> dict[str, Any]:
    """Find the first kill action that loads *and* kills; returns
    ``{"action", "signal", "tried": [...]}`` or ``{"action": None, "error", "tried"}``."""
    tried = []
    for action in preferred:
        try:  # libseccomp may refuse the action up front (gVisor: KILL_PROCESS -> EINVAL)
            flt = compile_child_filter(action)
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
        reason = {
            _PROBE_LOAD_EINVAL: "load failed with EINVAL",
            _PROBE_LOAD_OTHER: "load failed",
            _PROBE_SURVIVED: "forbidden call did not kill",
        }.get(code, f"exit code {code}")
        tried.append({"action": action, "result": reason})
    return {"action": None, "error": "no seccomp kill action both loads and kills", "tried": tried}


def probe_and_compile() -> tuple[dict[str, Any], BpfFilter | None]:
    """(probe report, the compiled filter for the action that was proven to kill)."""
    probe = probe_kill_action()
    return probe, (compile_child_filter(probe["action"]) if probe.get("action") else None)


def docker_profile_json() -> str:
    """The container-wide docker seccomp profile (rendered from policy.py)."""
    return policy.seccomp_profile_json()
