"""The semantic judge against a fake OpenAI-compatible server on a loopback port."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from harness.blame.errors import JudgeUnavailable
from harness.grading.judge import JUDGE_ATTEMPTS, JUDGE_VERSION, SemanticJudge
from harness.grading.judge_cache import JudgeCache, judge_cache_key
from harness.grading.judge_prompt import JUDGE_PROMPT_MAX_CHARS, JUDGE_PROMPT_TEMPLATE, parse_verdict
from harness.grading.two_tier import grade_two_tier
from tests.loopback import serve_on_loopback

#: SHA-256 of the judge prompt template of JUDGE_VERSION "artifact-aware-3".
PINNED_PROMPT_DIGEST = "6c3d2b1a74f2ccf98c15b89937c92ffdbbaa1a08cd203be0c0d8b46316bb3d28"


@dataclass
class FakeChatServer:
    """Answers chat completions with ``reply`` (or HTTP ``status``) and records request bodies."""

    reply: str = '{"pass": true, "why": "same id"}'
    status: int = 200
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    async def completions(self, request: Request) -> JSONResponse:
        self.requests.append({"body": await request.json(), "auth": request.headers.get("authorization")})
        if self.status != 200:
            return JSONResponse({"error": "boom"}, status_code=self.status)
        return JSONResponse({"choices": [{"message": {"role": "assistant", "content": self.reply}}]})


@pytest.fixture(scope="module")
def server() -> Iterator[FakeChatServer]:
    fake = FakeChatServer()
    app = Starlette(routes=[Route("/v1/chat/completions", fake.completions, methods=["POST"])])
    with serve_on_loopback(app) as base:
        fake.base_url = f"{base}/v1"
        yield fake


@pytest.fixture()
def fake(server: FakeChatServer) -> FakeChatServer:
    server.reply, server.status = '{"pass": true, "why": "same id"}', 200
    server.requests.clear()
    return server


def _judge(fake: FakeChatServer, tmp_path: Path, **options: Any) -> SemanticJudge:
    return SemanticJudge(base_url=fake.base_url, api_key="sk-test", cache=JudgeCache(tmp_path / "cache.json"),
                         retry_wait_s=0, **options)


def test_cache_key_vector() -> None:
    assert JUDGE_VERSION == "artifact-aware-3"
    assert judge_cache_key("cost_center", "CC330", "CC-330") == "506ff4ca35af092c2ca2155591df356f"
    list_key = hashlib.md5(b"artifact-aware-3|e|['Built a payments service']|x").hexdigest()
    assert judge_cache_key("e", ["Built a payments service"], "x") == list_key


def test_prompt_edit_requires_a_version_bump() -> None:
    digest = hashlib.sha256(JUDGE_PROMPT_TEMPLATE.encode()).hexdigest()
    assert digest == PINNED_PROMPT_DIGEST, (
        "the judge prompt changed: bump JUDGE_VERSION (cached verdicts belong to the old prompt), "
        f"then pin the new digest {digest}")


async def test_request_shape_verdict_and_caching(fake: FakeChatServer, tmp_path: Path) -> None:
    judge = _judge(fake, tmp_path)
    assert await judge("cost_center", "CC330", "CC-330", "expense_1 (FORM)") is True
    (request,) = fake.requests
    body = request["body"]
    assert request["auth"] == "Bearer sk-test"
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0 and body["max_tokens"] == 120
    assert [m["role"] for m in body["messages"]] == ["user"]
    content = body["messages"][0]["content"]
    for line in ("Field: cost_center", "Context: expense_1 (FORM)", "Reference (gold): 'CC-330'",
                 "Agent wrote: 'CC330'"):
        assert line in content.splitlines()

    assert await judge("cost_center", "CC330", "CC-330", "another context") is True
    assert len(fake.requests) == 1 and (judge.calls, judge.cache_hits, judge.errors) == (1, 1, 0)
    JudgeCache(tmp_path / "cache.json").export_json(tmp_path / "exported.json")
    assert json.loads((tmp_path / "exported.json").read_text()) == {"506ff4ca35af092c2ca2155591df356f": True}


async def test_fail_verdict_is_parsed_from_surrounding_text(fake: FakeChatServer, tmp_path: Path) -> None:
    fake.reply = 'Sure.\n{"pass": false,\n "why": "different cost center"}\nDone.'
    judge = _judge(fake, tmp_path)
    assert await judge("cost_center", "CC5500", "CC-330", "ctx") is False
    assert JudgeCache(tmp_path / "cache.json").get(judge_cache_key("cost_center", "CC5500", "CC-330")) is False


@pytest.mark.parametrize(("status", "reply"), [(500, ""), (200, "I think they match."), (200, "{not json}")])
async def test_no_verdict_is_unavailable_and_not_cached(fake: FakeChatServer, tmp_path: Path, status: int, reply: str) -> None:
    fake.status, fake.reply = status, reply
    judge = _judge(fake, tmp_path)
    with pytest.raises(JudgeUnavailable, match=f"judge gpt-4o-mini at {fake.base_url}.*after 3 request"):
        await judge("f", "a", "b", "ctx")
    # Tried JUDGE_ATTEMPTS times, then one error: the field stays pending, nothing cached.
    assert (judge.errors, judge.requests, len(fake.requests)) == (1, JUDGE_ATTEMPTS, JUDGE_ATTEMPTS)
    assert JudgeCache(tmp_path / "cache.json").get(judge_cache_key("f", "a", "b")) is None
    fake.status, fake.reply = 200, '{"pass": true}'
    assert await judge("f", "a", "b", "ctx") is True
    assert judge.calls == 2


@dataclass
class FlakyChatServer(FakeChatServer):
    """Fails the first ``failures`` requests with ``status`` (or a reply without JSON), then answers."""

    failures: int = 0

    async def completions(self, request: Request) -> JSONResponse:
        self.requests.append({"body": await request.json()})
        if len(self.requests) <= self.failures:
            if self.status != 200:
                return JSONResponse({"error": "busy"}, status_code=self.status)
            return JSONResponse({"choices": [{"message": {"role": "assistant", "content": "I refuse to use JSON."}}]})
        return JSONResponse({"choices": [{"message": {"role": "assistant", "content": self.reply}}]})


@pytest.mark.parametrize("status", [503, 429, 200])
async def test_a_verdict_after_transient_failures_is_kept(tmp_path: Path, status: int) -> None:
    flaky = FlakyChatServer(status=status, failures=JUDGE_ATTEMPTS - 1)
    app = Starlette(routes=[Route("/v1/chat/completions", flaky.completions, methods=["POST"])])
    with serve_on_loopback(app) as base:
        judge = SemanticJudge(base_url=f"{base}/v1", api_key="k", cache=JudgeCache(tmp_path / "c.json"), retry_wait_s=0)
        assert await judge("f", "a", "b", "ctx") is True
    assert (judge.requests, judge.errors, judge.calls) == (JUDGE_ATTEMPTS, 0, 1)


async def test_a_refusal_no_retry_can_fix_is_not_retried(fake: FakeChatServer, tmp_path: Path) -> None:
    fake.status = 401
    judge = _judge(fake, tmp_path)
    with pytest.raises(JudgeUnavailable, match="401"):
        await judge("f", "a", "b", "ctx")
    assert (judge.requests, judge.errors) == (1, 1)


async def test_the_prompt_is_bounded_whatever_the_agent_wrote(fake: FakeChatServer, tmp_path: Path) -> None:
    """Issue 33 break 6: 40 other fields of 64 KiB each, and a 1 MB value, cannot overflow the judge."""
    artifact = {f"field_{i}": "x" * 65_536 for i in range(40)}
    verdict = await grade_two_tier("semantic", "y" * 1_000_000, "the gold", None, field="summary",
                                   judge=_judge(fake, tmp_path), context="form_1 (FORM)", artifact=artifact)
    assert verdict.tier == "judge"
    (request,) = fake.requests
    content = request["body"]["messages"][0]["content"]
    assert len(content) <= JUDGE_PROMPT_MAX_CHARS < 40_000
    assert "more characters not shown]" in content and "Reference (gold): 'the gold'" in content
    assert content.rstrip().endswith('{"pass": true|false, "why": "<short reason>"}')


async def test_unreachable_endpoint_counts_an_error(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    judge = SemanticJudge(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", cache=None, retry_wait_s=0)
    with pytest.raises(JudgeUnavailable, match="ConnectError"):
        await judge("f", "a", "b", "ctx")
    assert (judge.errors, judge.requests) == (1, JUDGE_ATTEMPTS)


async def test_blank_prediction_fails_without_a_call(fake: FakeChatServer, tmp_path: Path) -> None:
    judge = _judge(fake, tmp_path)
    assert await judge("f", "   ", "b", "ctx") is False
    assert await judge("f", None, "b", "ctx") is False
    assert fake.requests == [] and judge.calls == 0


async def test_concurrent_calls_share_one_cache_file(fake: FakeChatServer, tmp_path: Path) -> None:
    judge = _judge(fake, tmp_path)
    verdicts = await asyncio.gather(*(judge("f", f"v{i}", "g", "ctx") for i in range(8)))
    assert verdicts == [True] * 8
    assert len(JudgeCache(tmp_path / "cache.json")) == 8


def test_from_env_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("APEX_VOICE_LLM_API_KEY", "OPENAI_API_KEY", "APEX_VOICE_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("APEX_VOICE_JUDGE_CACHE", str(tmp_path / "env-cache.json"))
    assert SemanticJudge.from_env() is None

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    judge = SemanticJudge.from_env()
    assert judge is not None and judge.api_key == "sk-openai" and judge.base_url == "https://api.openai.com/v1"
    assert judge.cache is not None and judge.cache.path == tmp_path / "env-cache.json"

    monkeypatch.setenv("APEX_VOICE_LLM_API_KEY", "sk-apex")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://openai.local/v1")
    monkeypatch.setenv("APEX_VOICE_LLM_BASE_URL", "http://apex.local/v1/")
    judge = SemanticJudge.from_env()
    assert judge is not None and (judge.api_key, judge.base_url) == ("sk-apex", "http://apex.local/v1")


def test_parse_verdict_truthiness() -> None:
    assert parse_verdict('{"pass": 1}') is True
    assert parse_verdict('```json\n{"pass": false}\n```') is False
    with pytest.raises(ValueError, match="no JSON object"):
        parse_verdict("PASS")

