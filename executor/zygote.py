"""The zygote: the process that forks every program's child, beside the supervisor's loop.

Why a separate process: under gVisor's ptrace platform a ``fork`` costs 6-7 ms and turns every
page of the forking process copy-on-write, so the process that forked pays a Sentry round trip
for each page it writes afterwards. When the supervisor's request loop forked the children
itself, both costs sat on the request path. The zygote takes them off it: it holds the child
template (allowed modules imported and warmed, proxies, restricted builtins, the seccomp filter
object), forks *spare* children ahead of demand, and is the parent that reaps them. The loop
(``supervisor.py``) never forks after start-up; it hands each program to a ready spare.

Every program still gets a fresh process: a spare is forked from the zygote, runs exactly one
program (or none, if it is never used) and exits. A spare has already set its descriptors,
environment and rlimits and warmed itself before its program arrives (``child.run_child``).

Protocol on the unix SEQPACKET socket shared with the loop (one datagram per message):

* loop -> zygote, first ``{"seccomp_bpf": hex|null, "action": str|null}`` (the child filter the
  loop compiled and proved with ``seccomp_filter.probe_and_compile``), then one byte per
  message: ``S`` fork a spare with the configured layers; ``T``
  fork a spare with layers 1-2 (static policy, builtins allow-list) also off, used only by the
  start-up self-test and refused once ``R`` was received; ``R`` start-up is over.
* zygote -> loop: ``{"hello": {"pid": ...}}`` once the templates are built; ``{"spare": pid, "kind": "S"|"T"}``
  with two descriptors attached (the write end of the spare's request pipe, the read end of
  its result pipe); ``{"exit": pid, "status": int, "cpu_ms": float}`` when a child ended
  (``wait4``: exit status and CPU time of the child).

End of file on the socket (the loop is gone) makes the zygote kill and reap its children and
exit. The zygote keeps no descriptor of any child pipe after handing it over, so the loop sees
end of file on a result pipe exactly when the child's copy closes.

Start (issue 33): the loop forks and *executes* a fresh interpreter as the zygote
(``start_zygote``), with ``PYTHONHASHSEED`` = policy.HASH_SEED as its whole environment and,
where the kernel honours it, ``personality(ADDR_NO_RANDOMIZE)``: every child then has the
policy's hash secret and, on Linux, the same address layout on every start. The loop itself
keeps a random secret and ASLR (policy.py, "Determinism"). The zygote checks the hash settings,
makes itself not dumpable (execve resets that flag) and reports ``address_layout`` ("fixed" or
"randomised") in its hello.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import sys

from executor import child, policy

# names for the type checker only: typing stays out of the zygote, whose modules every child inherits (child.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import ctypes
    from collections.abc import Iterable
    from types import ModuleType

SPARE = b"S"
TEST_SPARE = b"T"
RUN_PHASE = b"R"
SELFTEST_LAYERS_OFF = frozenset({"static", "builtins"})
MAX_MESSAGE = 4096


def _send(sock: socket.socket, obj: dict[str, object], fds: Iterable[int] = ()) -> None:
    data = json.dumps(obj).encode()
    if fds:
        socket.send_fds(sock, [data], list(fds))
    else:
        sock.send(data)


_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _mould_cycle(kind: str, template: child.ChildTemplate, cmd_r: int, report: socket.socket, devnull: int) -> bool:
    """One turn of a mould's loop (``Mould``): wait for a byte, fork the go-between, which forks
    the spare and reports it, reap the go-between. Every object it makes is freed before it
    returns, in the same order every turn, so the mould's heap is the same at every fork.
    False when the zygote is gone."""
    if not os.read(cmd_r, 1):
        return False
    req_r, req_w = os.pipe()
    res_r, res_w = os.pipe()
    go_between = os.fork()
    if go_between == 0:
        try:
            spare = os.fork()
            if spare == 0:
                try:
                    child.run_child(template, res_w, req_r, devnull)  # never returns
                finally:
                    os._exit(70)
            _send(report, {"spare": spare, "kind": kind}, (req_w, res_r))
        finally:
            os._exit(0)
    os.close(req_r)
    os.close(req_w)
    os.close(res_r)
    os.close(res_w)
    os.waitpid(go_between, 0)
    return True


class Mould:
    """The process every spare of one kind is forked from (issue 46: one interpreter state per
    run). The zygote's heap changes between forks (messages, reaping, timing); a mould's does not.
    Forked from the zygote once the templates are built, it collects and freezes the garbage
    collector's generations (``gc.freeze``), turns the collector off and then only runs
    ``_mould_cycle``: read one byte, fork. Each spare is forked by a short-lived go-between (the
    mould's child, which reports the spare to the zygote with its pipes and exits at once), so
    the mould never waits for a spare and never learns how it ended: the spare, orphaned, is
    re-parented to the zygote (a child subreaper), which reaps it and reports its status and CPU
    time as before. A spare re-enables the collector (``child.run_child``), from the same frozen
    state every time."""

    def __init__(
        self,
        kind: bytes,
        template: child.ChildTemplate,
        report: socket.socket,
        devnull: int,
        close_fds: Iterable[int] = (),
    ) -> None:
        cmd_r, self.cmd_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            code = 0
            try:
                os.close(self.cmd_w)
                for fd in close_fds:
                    os.close(fd)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                k = kind.decode()
                gc.collect()
                gc.freeze()
                gc.disable()
                while _mould_cycle(k, template, cmd_r, report, devnull):
                    pass
            except BaseException:
                code = 1
            os._exit(code)
        os.close(cmd_r)

    def fork_spare(self) -> None:
        os.write(self.cmd_w, b"x")

    def stop(self) -> None:
        try:
            os.close(self.cmd_w)
        except OSError:
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass


class Zygote:
    """State of the zygote process (built after the fork from the loop)."""

    def __init__(self, sock: socket.socket, limits: dict[str, int | float], disabled_layers: frozenset[str]):
        self.sock = sock
        self.devnull = os.open(os.devnull, os.O_RDWR)
        config = json.loads(sock.recv(MAX_MESSAGE * 64) or b"null")
        if not isinstance(config, dict):
            raise RuntimeError("the loop closed the socket before sending the seccomp filter")
        flt = None
        if config.get("seccomp_bpf"):
            from executor.seccomp_filter import BpfFilter

            flt = BpfFilter(bytes.fromhex(config["seccomp_bpf"]), config["action"])
        if flt is not None:  # once, inherited by every child (seccomp_filter.BpfFilter.prepare)
            flt.set_no_new_privs()
        self.templates = {SPARE: child.build_template(limits, disabled_layers, flt)}
        self.templates[TEST_SPARE] = child.build_template(limits, frozenset(disabled_layers) | SELFTEST_LAYERS_OFF, flt)
        self.children: set[int] = set()
        self.address_layout = "randomised"
        self.moulds: dict[bytes, Mould] = {}
        self.reports: socket.socket | None = None

    def start_moulds(self) -> None:
        """Fork one mould per template (after the zygote dropped its plumbing from the module
        table: the moulds' children inherit that table)."""
        # the spares' go-betweens report here; the moulds and go-betweens hold the other end
        self.reports, mould_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.reports.setblocking(False)
        for kind, template in self.templates.items():
            self.moulds[kind] = Mould(
                kind, template, mould_end, self.devnull, close_fds=(self.sock.fileno(), self.reports.fileno())
            )
        mould_end.close()

    def fork_spare(self, kind: bytes) -> None:
        mould = self.moulds.get(kind)
        if mould is None:
            raise RuntimeError(f"zygote: spare kind {kind!r} not available")
        mould.fork_spare()

    def forward_reports(self) -> None:
        """Hand every spare a go-between reported to the loop, with its two descriptors."""
        assert self.reports is not None, "start_moulds() first"
        while True:
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.reports, MAX_MESSAGE, 2)
            except BlockingIOError:
                return
            try:
                msg = json.loads(data)
                self.children.add(msg["spare"])
                _send(self.sock, msg, fds)
            finally:
                for fd in fds:
                    os.close(fd)

    def drop_mould(self, kind: bytes) -> None:
        mould = self.moulds.pop(kind, None)
        if mould is not None:
            mould.stop()

    def reap(self) -> None:
        """Report every child that has ended (non-blocking): spares (re-parented here from
        their go-betweens) and moulds (a mould that ends takes the zygote with it, except the
        self-test mould dropped at the run phase)."""
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG | os.WUNTRACED)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if any(m.pid == pid for m in self.moulds.values()):
                if not os.WIFSTOPPED(status):
                    raise RuntimeError(f"a mould ended (status {status})")
                # stopped by a signal from outside (a program's SIGSTOP to the zygote's children):
                # a stop changes nothing in the mould's heap, so it is continued, never replaced
                # (a new mould forked from the zygote's changed heap would change the spares)
                try:
                    os.kill(pid, signal.SIGCONT)
                except OSError:
                    pass
                continue
            if pid not in self.children:
                # a spare is reported before it can be re-parented here (its go-between sends,
                # then exits): file the report first, so the loop learns of it before its end
                self.forward_reports()
                if pid not in self.children:
                    continue  # the dropped self-test mould
            if os.WIFSTOPPED(status):
                # stopped by a signal from outside (another program sent SIGSTOP to a waiting
                # spare): it could only time out its next program, so it is killed and replaced
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                continue
            self.children.discard(pid)
            _send(
                self.sock,
                {"exit": pid, "status": status, "cpu_ms": round((usage.ru_utime + usage.ru_stime) * 1000.0, 3)},
            )

    def serve(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        poller = select.poll()
        poller.register(self.sock.fileno(), 1)  # POLLIN
        poller.register(wake_r, 1)
        assert self.reports is not None, "start_moulds() first"
        poller.register(self.reports.fileno(), 1)
        _send(self.sock, {"hello": {"pid": os.getpid(), "address_layout": self.address_layout}})
        try:
            while True:
                self.forward_reports()
                self.reap()
                for fd, _ in poller.poll():
                    if fd == self.reports.fileno():
                        continue  # forwarded at the top of the loop
                    if fd == wake_r:
                        try:
                            while os.read(wake_r, 512):
                                pass
                        except BlockingIOError:
                            pass
                        continue
                    msg = self.sock.recv(MAX_MESSAGE)
                    if not msg:
                        return
                    for byte in msg:
                        cmd = bytes([byte])
                        if cmd == RUN_PHASE:
                            self.templates.pop(TEST_SPARE, None)  # no weakened child from now on
                            self.drop_mould(TEST_SPARE)
                        else:
                            self.fork_spare(cmd)
        finally:
            for kind in list(self.moulds):
                self.drop_mould(kind)
            for pid in list(self.children):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            while self.children:
                try:
                    pid, _ = os.waitpid(-1, 0)
                except ChildProcessError:
                    break
                self.children.discard(pid)


_PR_SET_DUMPABLE = 4  # linux/prctl.h
_ADDR_NO_RANDOMIZE = 0x0040000  # linux/personality.h
_PERSONALITY_QUERY = 0xFFFFFFFF
# -I without -E: PYTHONHASHSEED must be read; the environment is exactly ZYGOTE_ENVIRONMENT.
ZYGOTE_FLAGS = ("-P", "-s", "-S", "-B")
ZYGOTE_ENVIRONMENT = {"PYTHONHASHSEED": str(policy.HASH_SEED)}


def _libc() -> tuple[ModuleType, ctypes.CDLL]:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.personality.argtypes = (ctypes.c_ulong,)
    return ctypes, libc


def make_not_dumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): the /proc/<pid> entries of this process and of the children it
    forks (fd/, mem, environ) are then owned by root and closed to a same-user process without
    CAP_SYS_PTRACE, so a program cannot open the supervisor's protocol descriptors or a sibling's
    pipes. The loop calls it before it starts the zygote, the zygote again after its execve
    (which resets the flag). ctypes is dropped from the zygote's module table afterwards."""
    ctypes, libc = _libc()
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def make_child_subreaper() -> None:
    """prctl(PR_SET_CHILD_SUBREAPER, 1): the spares, forked by a mould's go-between that exits at
    once, are re-parented to the zygote, which reaps them (``Mould``). Linux and gVisor honour it."""
    ctypes, libc = _libc()
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER, 1) failed")


def request_fixed_address_layout() -> None:
    """personality(ADDR_NO_RANDOMIZE) for the next execve, best effort: Linux honours it, gVisor
    refuses the bit (EINVAL) and the container profile does not allow the call. Whether it took
    effect is what ``address_layout`` reports."""
    try:
        _ctypes, libc = _libc()
        current = libc.personality(_PERSONALITY_QUERY)
        if current != -1:
            libc.personality(current | _ADDR_NO_RANDOMIZE)
    except (OSError, AttributeError):
        pass


def address_layout() -> str:
    """ "fixed" when this process runs with ADDR_NO_RANDOMIZE (or the kernel randomises
    nothing), else "randomised"."""
    try:
        _ctypes, libc = _libc()
        current = libc.personality(_PERSONALITY_QUERY)
        if current != -1 and current & _ADDR_NO_RANDOMIZE:
            return "fixed"
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/sys/kernel/randomize_va_space") as fh:
            if fh.read().strip() == "0":
                return "fixed"
    except OSError:
        pass
    return "randomised"


def check_hash_settings() -> None:
    """Refuse to serve unless this interpreter hashes str/bytes as the policy says."""
    info = sys.hash_info
    if (
        sys.flags.hash_randomization != (policy.HASH_SEED != 0)
        or info.algorithm != policy.HASH_ALGORITHM
        or info.width != 64
    ):
        raise RuntimeError(
            f"the zygote's str hash is not the policy's (PYTHONHASHSEED={policy.HASH_SEED}, "
            f"{policy.HASH_ALGORITHM}, 64 bits): hash_randomization="
            f"{sys.flags.hash_randomization}, algorithm={info.algorithm}, width={info.width}"
        )


def zygote_main(sock: socket.socket, limits: dict[str, int | float], disabled_layers: Iterable[str]) -> None:
    """Entry point in the freshly executed zygote. Never returns."""
    code = 0
    try:
        check_hash_settings()
        make_not_dumpable()
        make_child_subreaper()
        layout = address_layout()
        z = Zygote(sock, limits, frozenset(disabled_layers))
        z.address_layout = layout
        # The zygote's own plumbing stays out of its children's module table: a child that
        # wants ``socket`` (possible only with layers 1-2 off) must import it from the file
        # system, which its seccomp filter stops (tests/executor/test_adversarial.py, importlib_socket).
        for name in [
            n for n in sys.modules if n in ("socket", "_socket", "_ctypes") or n == "ctypes" or n.startswith("ctypes.")
        ]:  # ctypes: make_not_dumpable
            sys.modules.pop(name, None)
        z.start_moulds()
        z.serve()
    except BaseException as exc:  # report and die: the loop refuses to start or fails requests
        code = 1
        try:
            _send(sock, {"error": f"zygote: {type(exc).__name__}: {exc}"})
        except BaseException:
            pass
    os._exit(code)


def exec_main() -> None:
    """``python3 -P -s -S -B -c <zygote_command's code> FD LIMITS LAYERS``: the zygote's start."""
    fd, limits, layers = int(sys.argv[1]), json.loads(sys.argv[2]), [x for x in sys.argv[3].split(",") if x]
    # family, type and protocol given: the socket module would otherwise ask the kernel with
    # getsockname/getsockopt, which the container profile does not allow
    zygote_main(socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, 0, fileno=fd), limits, layers)


def zygote_command(fd: int, limits: dict[str, int | float], disabled_layers: Iterable[str]) -> list[str]:
    """The zygote's command line: this interpreter, the executor package importable (its parent
    directory first on sys.path: the repository on the host, the stdlib directory in the image)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = f"import sys; sys.path.insert(0, {package_parent!r}); from executor import zygote; zygote.exec_main()"
    return [_interpreter(), *ZYGOTE_FLAGS, "-c", code, str(fd), json.dumps(limits), ",".join(sorted(disabled_layers))]


def _interpreter() -> str:
    """This interpreter's path. ``sys.executable`` is empty in the container's supervisor,
    which re-executed itself as ``python3`` with an empty environment (no PATH to resolve
    the name by); /proc/self/exe always names the running binary."""
    if sys.executable and os.path.isabs(sys.executable) and os.access(sys.executable, os.X_OK):
        return sys.executable
    return os.readlink("/proc/self/exe")


def start_zygote(limits: dict[str, int | float], disabled_layers: Iterable[str]) -> tuple[int, socket.socket]:
    """Fork and execute the zygote: (pid, the loop's end of the socket). ``os.execve`` failing
    ends the forked process with status 127 and the loop sees the socket close."""
    loop_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    argv = zygote_command(zygote_end.fileno(), limits, disabled_layers)
    pid = os.fork()
    if pid == 0:
        try:
            loop_end.close()
            os.set_inheritable(zygote_end.fileno(), True)
            if policy.FIXED_ADDRESS_LAYOUT:
                request_fixed_address_layout()
            os.execve(argv[0], argv, ZYGOTE_ENVIRONMENT)
        finally:
            os._exit(127)
    zygote_end.close()
    return pid, loop_end
