"""Layer 5 (the container) proven on a real dockerd + runsc, no mocks.

Each property is checked in a one-off container started with exactly the flags the pool uses
(containers/executor/run-flags.txt) and, where a layer must be shown to do the blocking, against
a control container that differs only in that layer.
"""

from __future__ import annotations

import errno
import json
import subprocess
import textwrap

import pytest

from executor import pool

pytestmark = pytest.mark.docker

SECCOMP_FLAG = f"--security-opt=seccomp={pool.SECCOMP_PROFILE.resolve()}"


def pool_flags(**overrides) -> list[str]:
    values = dict(pool.DEFAULT_RUN_VALUES, seccomp_profile=str(pool.SECCOMP_PROFILE.resolve()))
    values.update(overrides)
    return pool.read_run_flags(**values)


def run_py(
    backend: dict, script: str, flags: list[str] | None = None, timeout: float = 120, user: str | None = None
) -> subprocess.CompletedProcess:
    """Run `python3 -I -S -c script` in a fresh container with the pool's flags (or ``flags``)."""
    flags = list(pool_flags() if flags is None else flags)
    if user:
        flags.append(f"--user={user}")
    argv = [
        backend["docker"],
        "run",
        "--rm",
        "-i",
        *flags,
        backend["image"],
        "python3",
        "-I",
        "-S",
        "-c",
        textwrap.dedent(script),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def without_seccomp(flags: list[str]) -> list[str]:
    """The control: identical flags but no container seccomp profile."""
    assert SECCOMP_FLAG in flags
    return [f if f != SECCOMP_FLAG else "--security-opt=seccomp=unconfined" for f in flags]


def last_json(proc: subprocess.CompletedProcess) -> dict:
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"no JSON from container: rc={proc.returncode} stdout={proc.stdout!r} stderr={proc.stderr[-800:]!r}"
    return json.loads(lines[-1])


# --- host configuration ------------------------------------------------------------------------


def test_dockerd_runsc_runtime_has_no_network_and_oci_seccomp(dockerd):
    info = subprocess.run(
        [dockerd, "info", "--format", "{{json .Runtimes}}"], capture_output=True, text=True, check=True, timeout=30
    )
    args = json.loads(info.stdout)["runsc"].get("runtimeArgs") or []
    assert "--network=none" in args and "--oci-seccomp" in args, args


def test_image_was_built_from_this_checkout(container_backend):
    res = subprocess.run(
        [container_backend["docker"], "image", "inspect", "--format", "{{json .Config}}", container_backend["image"]],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    config = json.loads(res.stdout)
    assert config["Labels"][pool.LABEL_SRC] == pool.executor_source_digest()
    assert config["User"] == "executor"
    assert config["Cmd"] == ["python3", "-I", "-S", "-m", "executor.supervisor"]


# --- layer 5 properties ------------------------------------------------------------------------


def test_runs_as_non_root_without_capabilities(container_backend):
    proc = run_py(
        container_backend,
        """
        import ctypes, json, os
        status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
        libc = ctypes.CDLL(None, use_errno=True)
        print(json.dumps({"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
                          "caps": {k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb") if k in status},
                          "nnp": libc.prctl(39, 0, 0, 0, 0),  # PR_GET_NO_NEW_PRIVS
                          "seccomp_mode": status.get("Seccomp", "").strip()}))
    """,
    )
    out = last_json(proc)
    assert out["uid"] == out["euid"] == 10001 and out["gid"] == 10001
    assert out["caps"] and all(int(v, 16) == 0 for v in out["caps"].values()), out["caps"]
    assert out["nnp"] == 1
    assert out["seccomp_mode"] == "2", "the container-wide seccomp filter must be installed"


def test_root_filesystem_is_read_only_and_no_directory_is_writable(container_backend):
    """Nothing in the container is writable, /tmp and /dev/shm included (a read-only tmpfs on
    /tmp, where runsc would mount a writable one; no /dev/shm): programs of one container share
    no directory (issue 22, item 4)."""
    script = """
        import json, os
        res = {}
        for path in ("/etc/evil", "/usr/lib/python3.11/evil.py", "/evil", "/tmp/evil", "/var/tmp/evil",
                     "/dev/shm/evil", "/dev/evil"):
            try:
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY)); res[path] = "created"
            except OSError as e:
                res[path] = e.errno
        mounts = [l.split() for l in open("/proc/self/mounts").read().splitlines()]
        res["rw_mounts"] = sorted(m[1] for m in mounts if m[3].startswith("rw") and m[2] != "cgroup")
        res["rw_cgroup_mkdir"] = {}
        for m in mounts:
            if m[3].startswith("rw") and m[2] == "cgroup":
                try:
                    os.mkdir(m[1] + "/evil"); os.rmdir(m[1] + "/evil"); res["rw_cgroup_mkdir"][m[1]] = "created"
                except OSError as e:
                    res["rw_cgroup_mkdir"][m[1]] = e.errno
        print(json.dumps(res))
    """
    # as root (uid 0 in the container, owner of every directory) too: the refusal must come from
    # the read-only mount, not from file permissions (as `executor` gVisor checks EACCES first)
    for user, expected in ((None, {errno.EROFS, errno.EACCES, errno.ENOENT}), ("0:0", {errno.EROFS, errno.ENOENT})):
        out = last_json(run_py(container_backend, script, user=user))
        for path in ("/etc/evil", "/usr/lib/python3.11/evil.py", "/evil", "/tmp/evil", "/var/tmp/evil"):
            assert out[path] in expected, (user, path, out[path])
        if user is None:  # /dev is root's 0755 tmpfs (runsc), no /dev/shm mount: closed to the executor user
            assert out["/dev/evil"] == errno.EACCES and out["/dev/shm/evil"] in (errno.EACCES, errno.ENOENT)
        assert out["rw_mounts"] == ["/dev", "/dev/pts", "/proc"], out["rw_mounts"]
        if user is None:
            # gVisor 20240729 (not 20221219) mounts its own, sandbox-internal cgroupfs hierarchies read-write
            # under /sys/fs/cgroup: the executor user can create nothing there either
            assert all(e in (errno.EACCES, errno.EPERM, errno.EROFS) for e in out["rw_cgroup_mkdir"].values()), out[
                "rw_cgroup_mkdir"
            ]


NETWORK_SCRIPT = """
    import json, socket
    res = {}
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        res["socket"] = "created"
        s.settimeout(3)
        try:
            s.connect(("1.1.1.1", 53)); res["connect"] = "connected"
        except OSError as e:
            res["connect"] = e.errno
        res["interfaces"] = sorted(name for _, name in socket.if_nameindex())
    except OSError as e:
        res["socket"] = e.errno
    print(json.dumps(res))
"""


def test_no_network_socket_denied_and_even_without_seccomp_no_route(container_backend):
    flags = pool_flags()
    out = last_json(run_py(container_backend, NETWORK_SCRIPT, flags))
    assert out["socket"] == errno.EPERM, out  # container seccomp profile: no socket(2) at all
    control = last_json(run_py(container_backend, NETWORK_SCRIPT, without_seccomp(flags)))
    assert control["socket"] == "created", control  # the control really lifts seccomp ...
    assert control["connect"] in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ECONNREFUSED), control
    assert control["connect"] != "connected"  # ... and the network layer alone still holds
    assert control["interfaces"] == ["lo"], control


DENIED_SCRIPT = """
    import json, os, socket
    res = {}
    for name, call in (("mkdir", lambda: os.mkdir("/tmp/d")),
                       ("getpriority", lambda: os.getpriority(os.PRIO_PROCESS, 0)),
                       ("socketpair_unix", lambda: socket.socketpair(socket.AF_UNIX)),
                       ("symlink", lambda: os.symlink("/tmp", "/tmp/l"))):
        try:
            call(); res[name] = "ok"
        except OSError as e:
            res[name] = e.errno
    print(json.dumps(res))
"""


def test_docker_seccomp_profile_is_enforced_under_runsc(container_backend):
    """runsc ignores --security-opt seccomp= unless it runs with --oci-seccomp: syscalls outside
    the profile fail with EPERM in the container and succeed in the otherwise identical control.
    (Both get a /tmp tmpfs, which the pool's flags no longer have, so that mkdir can succeed.)"""
    flags = pool_flags() + ["--tmpfs=/tmp:rw,mode=1777"]
    out = last_json(run_py(container_backend, DENIED_SCRIPT, flags))
    control = last_json(run_py(container_backend, DENIED_SCRIPT, without_seccomp(flags)))
    for name in ("mkdir", "getpriority", "symlink"):
        assert out[name] == errno.EPERM, (name, out)
        assert control[name] == "ok", (name, control)
    # socketpair is in the profile (the supervisor may use it): allowed in both
    assert out["socketpair_unix"] == "ok" and control["socketpair_unix"] == "ok"


PROBE_SCRIPT = """
    import ctypes, json, os, select, sys
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    for nr in map(int, sys.argv[1:]):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            res = libc.syscall(nr, 0, 0, 0, 0, 0, 0)
            try:
                os.write(w, b"returned")
            except OSError:
                pass
            os._exit(0)
        os.close(w)
        p = select.poll(); p.register(r, select.POLLIN)
        data = b""
        while True:
            if not p.poll(2000):
                os.kill(pid, 9); break          # blocked in the call: it was allowed
            chunk = os.read(r, 64)
            if not chunk:
                break
            data += chunk
        os.close(r)
        _, st = os.waitpid(pid, 0)
        trapped = os.WIFSIGNALED(st) and os.WTERMSIG(st) == 31 and not data
        out[nr] = "denied" if trapped else "allowed"
    print(json.dumps(out))
"""


def test_every_syscall_named_in_the_profile_is_known_to_runsc(container_backend, tmp_path):
    """gVisor resolves profile names with its own syscall table and silently skips names it does
    not know (in this release pselect6 is called "pselect"), which would deny a call the policy
    means to allow. Probe each allowed number with a TRAP-by-default copy of the profile: none may
    trap, and calls outside the profile must."""
    seccomp = pytest.importorskip("pyseccomp")
    profile = json.loads(pool.SECCOMP_PROFILE.read_text())
    allowed = {n for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ALLOW" for n in rule["names"]}
    numbers = {}
    for name in sorted(allowed):
        try:
            numbers[seccomp.resolve_syscall(seccomp.Arch.X86_64, name)] = name
        except Exception:  # not a syscall on x86_64 at all (gVisor-only alias): nothing to probe
            continue
    outside = {seccomp.resolve_syscall(seccomp.Arch.X86_64, n): n for n in ("mkdir", "socket", "chdir", "sync")}
    trap_profile = dict(profile, defaultAction="SCMP_ACT_TRAP")
    trap_profile.pop("defaultErrnoRet", None)
    path = tmp_path / "trap-profile.json"
    path.write_text(json.dumps(trap_profile))
    flags = [f if f != SECCOMP_FLAG else f"--security-opt=seccomp={path}" for f in pool_flags()]
    argv = [
        container_backend["docker"],
        "run",
        "--rm",
        *flags,
        container_backend["image"],
        "python3",
        "-I",
        "-S",
        "-c",
        textwrap.dedent(PROBE_SCRIPT),
        *map(str, [*numbers, *outside]),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    res = {int(k): v for k, v in last_json(proc).items()}
    not_applied = sorted(numbers[n] for n in numbers if res[n] == "denied")
    assert not_applied == [], f"allowed by the profile but denied under runsc: {not_applied}"
    assert all(res[n] == "denied" for n in outside), {outside[n]: res[n] for n in outside}


def test_memory_limit_holds(container_backend):
    """No rlimits here (raw python, not the supervisor): only --memory/--memory-swap stop it."""
    proc = run_py(
        container_backend,
        """
        import sys
        chunks = []
        try:
            for i in range(1, 65):                       # up to 2 GiB in 32 MiB touched chunks
                chunks.append(b"x" * (32 << 20))
                print("MiB", 32 * i, flush=True)
            print("ALLOCATED-ALL", flush=True)
        except MemoryError:
            print("MemoryError", flush=True)
    """,
        timeout=180,
    )
    reached = [int(l.split()[1]) for l in proc.stdout.splitlines() if l.startswith("MiB ")]
    assert "ALLOCATED-ALL" not in proc.stdout
    assert max(reached, default=0) <= 512, reached[-3:]
    assert "MemoryError" in proc.stdout or proc.returncode != 0, (proc.returncode, proc.stdout[-300:])


def test_pids_limit_contains_a_fork_bomb(container_backend):
    """A raw fork bomb (no rlimits, no child seccomp) hits --pids-limit. Either fork is refused
    (EAGAIN) below the limit and the sandbox survives, or the Sentry, whose own threads and ptrace
    stubs count against the same limit, cannot grow and the sandbox is torn down (observed with
    as few as 20 sleeping children at --pids-limit=128). Both are contained: the bomb never gets
    past the limit, and the next container starts normally."""
    proc = run_py(
        container_backend,
        """
        import os, time
        n, err = 0, None
        try:
            for _ in range(1000):
                pid = os.fork()
                if pid == 0:
                    time.sleep(30)
                    os._exit(0)
                n += 1
        except OSError as e:
            err = e.errno
        print("forked", n, "errno", err, flush=True)
        os._exit(0)
    """,
        timeout=180,
    )
    lines = [l for l in proc.stdout.splitlines() if l.startswith("forked")]
    if lines:  # the sandbox survived the bomb: fork must have been refused well before 1000
        n, err = int(lines[0].split()[1]), lines[0].split()[3]
        assert n < pool.DEFAULT_RUN_VALUES["pids_limit"] and err == str(errno.EAGAIN), lines[0]
    else:  # the sandbox was torn down: acceptable, but it must have ended, not hung
        assert proc.returncode != 0
    after = last_json(run_py(container_backend, "import json; print(json.dumps({'ok': 1}))"))
    assert after == {"ok": 1}


def test_child_seccomp_kill_thread_kills_inside_gvisor(container_backend):
    """In this gVisor release SECCOMP_RET_KILL_PROCESS is refused with EINVAL; the supervisor's
    probe must fall back to KILL_THREAD and prove that a forbidden call kills the child (SIGSYS)."""
    proc = run_py(
        container_backend,
        """
        import json
        from executor import seccomp_filter
        print(json.dumps(seccomp_filter.probe_kill_action()))
    """,
    )
    out = last_json(proc)
    assert out["action"] == "KILL_THREAD", out
    assert out["signal"] == 31, out  # SIGSYS
    assert "KILL_PROCESS" in json.dumps(out["tried"]), out


def test_install_host_is_idempotent(container_backend):
    """A second run on a configured host changes nothing: same daemon.json, same dockerd."""
    import os
    from pathlib import Path

    if os.geteuid() != 0:
        pytest.skip("scripts/install-host.sh needs root")
    daemon_json = Path("/etc/docker/daemon.json")
    before = (daemon_json.read_text(), Path("/var/run/docker.pid").read_text())
    proc = subprocess.run(
        ["bash", str(pool.REPO_ROOT / "scripts" / "install-host.sh")], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "dockerd already running" in proc.stderr and "ready:" in proc.stderr
    assert (daemon_json.read_text(), Path("/var/run/docker.pid").read_text()) == before
    runtime = json.loads(daemon_json.read_text())["runtimes"]["runsc"]
    assert {"--network=none", "--oci-seccomp"} <= set(runtime["runtimeArgs"])
