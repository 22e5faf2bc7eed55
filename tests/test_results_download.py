"""`apex-voice download` against a small Hugging Face-compatible hub on loopback (never the network)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from typer.testing import CliRunner

from harness.cli.main import app
from harness.results.hub import HF_REPO_ENV
from tests.loopback import serve_on_loopback

REPO = "apex-test/APEX-Voice"
COMMIT = "a" * 40
FILES = {
    "tasks/demo_x/task.yaml": b"id: demo_x\nversion: 1.0.0\n",
    "tasks/demo_x/grading/gold.yaml": b"terminal_state: []\n",
    "data/tasks.jsonl": b'{"task_id": "demo_x"}\n',
    "README.md": b"# test dataset\n",
}


def _sums(files: dict[str, bytes]) -> bytes:
    lines = [f"{hashlib.sha256(body).hexdigest()}  {path}\n" for path, body in sorted(files.items())
             if path.startswith(("tasks/", "data/"))]
    return "".join(lines).encode()


@dataclass
class FakeHub:
    """Serves one dataset repo at one commit the way the Hub API does (revision info, tree, resolve)."""

    files: dict[str, bytes] = field(default_factory=dict)
    fail_once: set[str] = field(default_factory=set)
    downloads: Counter = field(default_factory=Counter)
    endpoint: str = ""

    def _repo(self, request: Request) -> str:
        return f"{request.path_params['org']}/{request.path_params['name']}"

    def _known(self, request: Request) -> Response | None:
        if self._repo(request) != REPO:
            return JSONResponse({"error": "Repository not found"}, 404, headers={"X-Error-Code": "RepoNotFound"})
        if request.path_params["rev"] not in ("main", COMMIT):
            return JSONResponse({"error": "Invalid rev id"}, 404, headers={"X-Error-Code": "RevisionNotFound"})
        return None

    async def revision(self, request: Request) -> Response:
        return self._known(request) or JSONResponse({
            "id": REPO, "sha": COMMIT, "private": False, "siblings": [{"rfilename": p} for p in sorted(self.files)],
        })

    async def tree(self, request: Request) -> Response:
        return self._known(request) or JSONResponse([
            {"type": "file", "oid": hashlib.sha1(body).hexdigest(), "size": len(body), "path": path}
            for path, body in sorted(self.files.items())
        ])

    async def resolve(self, request: Request) -> Response:
        refused = self._known(request)
        path = request.path_params["path"]
        if refused is not None:
            return refused
        if path not in self.files:
            return JSONResponse({"error": "Entry not found"}, 404, headers={"X-Error-Code": "EntryNotFound"})
        body = self.files[path]
        headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha1(body).hexdigest()}"',
                   "Content-Length": str(len(body)), "Accept-Ranges": "bytes"}
        if request.method == "HEAD":
            return Response(b"", headers=headers)
        self.downloads[path] += 1
        if path in self.fail_once:
            self.fail_once.discard(path)
            return Response(b"upstream hiccup", 500)
        return Response(body, headers=headers)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeHub]:
    hub = FakeHub()
    prefix = "/{org}/{name}"
    app_ = Starlette(routes=[
        Route(f"/api/datasets{prefix}/revision/{{rev}}", hub.revision),
        Route(f"/api/datasets{prefix}/tree/{{rev}}", hub.tree),
        Route(f"/datasets{prefix}/resolve/{{rev}}/{{path:path}}", hub.resolve, methods=["GET", "HEAD"]),
    ])
    with serve_on_loopback(app_) as base:
        hub.endpoint = base
        yield hub


@pytest.fixture
def hub(server: FakeHub, monkeypatch, tmp_path) -> FakeHub:
    server.files = {**FILES, "SHA256SUMS": _sums(FILES)}
    server.fail_once = set()
    server.downloads.clear()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv(HF_REPO_ENV, REPO)
    return server


def _download(*args: str):
    return CliRunner().invoke(app, ["download", *args], catch_exceptions=False)


def test_a_clean_download_is_verified(hub, tmp_path):
    target = tmp_path / "data"
    result = _download("--local-dir", str(target), "--revision", COMMIT)
    assert result.exit_code == 0, result.output
    assert f"{REPO}@{COMMIT} -> {target.resolve()}" in result.output
    assert "3 files match SHA256SUMS" in result.output and f"export APEX_VOICE_DATA={target.resolve()}" in result.output
    for path, body in FILES.items():
        assert (target / path).read_bytes() == body


def test_an_interrupted_download_resumes_without_fetching_again(hub, tmp_path):
    target = tmp_path / "data"
    hub.fail_once = {"tasks/demo_x/grading/gold.yaml"}
    first = _download("--local-dir", str(target))
    assert first.exit_code == 1 and "run again to resume" in first.output
    fetched_first = dict(hub.downloads)
    assert fetched_first["tasks/demo_x/grading/gold.yaml"] == 1
    second = _download("--local-dir", str(target))
    assert second.exit_code == 0, second.output
    again = {path for path, count in hub.downloads.items() if count > fetched_first.get(path, 0)}
    # Only the file that failed is fetched again; the ones already on disk are kept.
    assert again == {"tasks/demo_x/grading/gold.yaml"}
    assert (target / "tasks/demo_x/grading/gold.yaml").read_bytes() == FILES["tasks/demo_x/grading/gold.yaml"]


def test_a_corrupted_file_is_detected_and_named(hub, tmp_path):
    hub.files["tasks/demo_x/task.yaml"] = b"id: demo_x\nversion: 6.6.6\n"  # served, but not what was published
    result = _download("--local-dir", str(tmp_path / "data"))
    assert result.exit_code == 1
    assert "error: tasks/demo_x/task.yaml differs from SHA256SUMS" in result.output
    assert "gold.yaml" not in result.output


def test_a_missing_file_and_an_escaping_entry_are_named(hub, tmp_path):
    del hub.files["data/tasks.jsonl"]
    hub.files["SHA256SUMS"] = _sums(FILES) + b"0" * 64 + b"  ../outside.txt\n"
    result = _download("--local-dir", str(tmp_path / "data"))
    assert result.exit_code == 1
    assert "error: data/tasks.jsonl missing from SHA256SUMS" in result.output
    assert "error: ../outside.txt outside the snapshot (not checked) from SHA256SUMS" in result.output


def test_repo_flag_overrides_the_environment_and_unknown_repos_are_usage_errors(hub, tmp_path):
    result = _download("--repo", "someone/else", "--local-dir", str(tmp_path / "x"))
    assert result.exit_code == 2 and "someone/else@main: RepositoryNotFoundError" in result.output
    bad_rev = _download("--revision", "v9", "--local-dir", str(tmp_path / "y"))
    assert bad_rev.exit_code == 2 and "RevisionNotFoundError" in bad_rev.output
