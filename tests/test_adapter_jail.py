"""The hosted adapter's sandbox command: every namespace, only the runtime and its own files bound,
an installed copy of the harness hidden (``sandbox/adapter_jail.py``; the CLI tests in
``tests/adversarial/test_adapter_sandbox.py`` run it)."""

from __future__ import annotations

import sys
from pathlib import Path

from sandbox import adapter_jail
from sandbox.child_env import source_root


def _pairs(command: list[str], option: str) -> list[tuple[str, str]]:
    return [(command[i + 1], command[i + 2]) for i, part in enumerate(command) if part == option]


def test_the_sandbox_has_every_namespace_and_binds_only_the_runtime_and_its_own_files(tmp_path):
    runtime, adapter, home = tmp_path / "runtime", tmp_path / "mypkg", tmp_path / "home"
    command = adapter_jail.jail_command(["python", "-m", "x"], runtime=runtime, adapter=adapter, home=home, info_fd=7)
    options = command[: command.index("--")]
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
                 "--die-with-parent", "--new-session"):
        assert flag in options
    assert options[options.index("--cap-drop") + 1] == "ALL" and options[options.index("--uid") + 1] == "65534"
    assert command[command.index("--") + 1:] == ["python", "-m", "x"]
    assert _pairs(command, "--bind") == [(str(home), adapter_jail.JAIL_HOME)]  # the only writable bind
    read_only = dict(_pairs(command, "--ro-bind"))
    assert read_only[str(runtime)] == adapter_jail.JAIL_RUNTIME and read_only[str(adapter)] == "/opt/adapter/mypkg"
    allowed = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", str(runtime), str(adapter),
               *map(str, adapter_jail.runtime_roots())}
    assert set(read_only) <= allowed, set(read_only) - allowed
    assert {source for source, _ in _pairs(command, "--ro-bind-try")} <= set(adapter_jail._ETC_FILES)
    checkout = source_root("harness")
    assert checkout is not None
    for source in set(read_only) - {str(runtime), str(adapter)}:
        path = Path(source)
        assert path != checkout and path not in checkout.parents, source  # would show the whole checkout
        # Inside the checkout only the interpreter's own tree may be bound (a .venv made in the clone, as CI does).
        assert checkout not in path.parents or path == Path(sys.prefix) or Path(sys.prefix) in path.parents, source
    assert options[options.index("--info-fd") + 1] == "7"


def test_an_installed_copy_of_the_harness_inside_the_runtime_is_hidden(tmp_path, monkeypatch):
    site = tmp_path / "venv" / "lib" / "site-packages"
    (site / "harness" / "demo_data").mkdir(parents=True)
    monkeypatch.setattr(adapter_jail, "runtime_roots", lambda: (tmp_path / "venv",))
    monkeypatch.setattr(adapter_jail, "source_root", lambda package: site if package == "harness" else None)
    command = adapter_jail.jail_command(["python"], runtime=tmp_path, adapter=tmp_path / "a", home=tmp_path)
    assert [command[i + 1] for i, part in enumerate(command) if part == "--tmpfs"] == ["/dev/shm", "/tmp", str(site / "harness")]


def test_a_runtime_under_tmp_is_bound_after_the_private_tmp(tmp_path, monkeypatch):
    """CI cloned into /tmp: the venv bound before `--tmpfs /tmp` vanished (bwrap: execvp .../python: No such file)."""
    venv = Path("/tmp/some-clone/.venv")
    monkeypatch.setattr(adapter_jail, "runtime_roots", lambda: [venv])
    command = adapter_jail.jail_command(["python"], runtime=tmp_path / "runtime", adapter=tmp_path / "pkg",
                                        home=tmp_path / "home")
    tmpfs_at = next(i for i, part in enumerate(command) if part == "--tmpfs" and command[i + 1] == "/tmp")
    bound_at = next(i for i, part in enumerate(command) if part == "--ro-bind" and command[i + 1] == str(venv))
    assert tmpfs_at < bound_at
