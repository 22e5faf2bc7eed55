"""A campaign knows what it measures: one ``MeasurementIdentity``, stored whole, compared whole on resume.

Issue 23 items 1 and 15 (a C3 run into a C2 directory reused the C2 results; the identical C0 command
was refused) and issue 34 (the provider model, endpoint, tool latency, judge and act observer were
not compared at all; a rerun without its ``--only`` grew a 1-task campaign to 10 tasks).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import __version__
from harness.agents.registry import get_model
from harness.campaign.campaign import CampaignCell, CampaignMismatchError, CampaignSettings, run_campaign
from harness.cli.main import app
from harness.results.campaign_files import MANIFEST_FILE
from harness.results.measurement_identity import MeasurementIdentity, TaskPin
from harness.results.result_record import ResultRecord
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA
from tests.fakes.fake_chat_server import API_KEY, FakeChatServer, serve_fake_chat_in_thread

DEMO_TASK = "demo_warranty_advice_001"
OTHER_TASK = "demo_benefits_enrollment_001"


class Cells:
    """Writes a passing record stamped with the campaign's condition, as the real runners do."""

    def __init__(self, model: str = "oracle", condition: str = "C2") -> None:
        self.model, self.condition = model, condition
        self.calls: list[CampaignCell] = []

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        self.calls.append(cell)
        return ResultRecord(task_id=cell.task_id, rep=cell.rep, model=self.model, condition=self.condition, pts=1,
                            components={"GS": True, "PC": True, "RA": True, "WA": True})


def _settings(out: Path, measured: dict | None = None, **overrides) -> CampaignSettings:
    values = {"model": get_model("oracle"), "out_dir": out, "repeats": 1, "retry_backoff_s": 0.0,
              "identity": MeasurementIdentity(model="oracle", **(measured or {})), **overrides}
    return CampaignSettings(**values)


def _manifest(out: Path) -> dict:
    return json.loads((out / MANIFEST_FILE).read_text())


async def test_campaign_json_and_every_result_json_store_the_identity_whole(tmp_path):
    measured = {"condition": "C3", "acoustics": "harsh", "user_audio": "tts", "seed": 7, "tool_latency_ms": 250,
                "observer": "llm", "observer_model": "obs-1", "judge_model": "judge-1", "max_turns": 12}
    pins = {"task_a": TaskPin(version="1.0.0", checksum="ab12"), "task_b": TaskPin(version="2.1.0")}
    await run_campaign(_settings(tmp_path, measured, repeats=2), ["task_a", "task_b"], Cells(condition="C3"),
                       task_pins=pins)
    expected = MeasurementIdentity(model="oracle", **measured, tasks=pins, repeats=2)
    manifest = _manifest(tmp_path)
    assert MeasurementIdentity.model_validate(manifest["identity"]) == expected
    for task in pins:
        for rep in (0, 1):
            assert ResultRecord.read(tmp_path / task / f"rep{rep}").identity == expected
    # The published keys are written from it, for the published tooling.
    published = {key: manifest[key] for key in ("model", "condition", "repeats", "max_turns", "user_audio", "n_tasks",
                                                "apex_voice_version", "judge_version")}
    assert published == {"model": "oracle", "condition": "C3", "repeats": 2, "max_turns": 12, "user_audio": "tts",
                         "n_tasks": 2, "apex_voice_version": __version__, "judge_version": expected.judge_version}


@pytest.mark.parametrize("condition", ["C0", "C1", "C2", "C3"])
async def test_the_identical_command_resumes_in_every_condition(tmp_path, condition):
    measured = {"condition": condition, "acoustics": "moderate" if condition == "C3" else "none"}
    await run_campaign(_settings(tmp_path, measured), ["task_a"], Cells(condition=condition))
    assert _manifest(tmp_path)["condition"] == condition
    again = Cells(condition=condition)
    result = await run_campaign(_settings(tmp_path, measured), ["task_a"], again)
    assert again.calls == [] and [o.status for o in result.outcomes] == ["loaded"]


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"condition": "C3", "acoustics": "moderate"}, ["condition: 'C2' → 'C3'", "acoustics: 'none' → 'moderate'"]),
        ({"provider_model": "B"}, ["provider_model: none → 'B'"]),
        ({"endpoint": "ws://127.0.0.1:9/v1"}, ["endpoint: none → 'ws://127.0.0.1:9/v1'"]),
        ({"tool_mode": "native"}, ["tool_mode: 'bridge' → 'native'"]),
        ({"tool_latency_ms": 500}, ["tool_latency_ms: 0 → 500"]),
        ({"observer": "llm", "observer_model": "m"}, ["observer: 'deterministic' → 'llm'", "observer_model: none → 'm'"]),
        ({"judge_model": "j"}, ["judge_model: none → 'j'"]),
        ({"judge_version": "other"}, ["judge_version: "]),
        ({"seed": 2}, ["seed: 1 → 2"]),
        ({"user_audio": "tts"}, ["user_audio: 'auto' → 'tts'"]),
        ({"max_turns": 3}, ["max_turns: 44 → 3"]),
    ],
)
async def test_a_changed_identity_is_refused_naming_every_difference(tmp_path, changed, named):
    await run_campaign(_settings(tmp_path), ["task_a"], Cells())
    before = (tmp_path / MANIFEST_FILE).read_text()
    runner = Cells()
    with pytest.raises(CampaignMismatchError) as refused:
        await run_campaign(_settings(tmp_path, changed), ["task_a"], runner)
    message = str(refused.value)
    for difference in named:
        assert difference in message
    assert "use a new --out" in message and "\n" not in message
    assert runner.calls == [] and (tmp_path / MANIFEST_FILE).read_text() == before


async def test_a_changed_task_version_is_named_by_task(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a", "task_b"], Cells(),
                       task_pins={"task_a": TaskPin(version="1.0"), "task_b": TaskPin(version="1.0")})
    with pytest.raises(CampaignMismatchError, match=r"tasks\[task_b\]: '1.0' → '1.1'"):
        await run_campaign(_settings(tmp_path), ["task_b"], Cells(), task_pins={"task_b": TaskPin(version="1.1")})
    # A task the campaign never ran grows it: only on purpose.
    with pytest.raises(CampaignMismatchError, match=r"tasks: '2 tasks' → '3 tasks \(new: task_c\)'.*--extend"):
        await run_campaign(_settings(tmp_path), ["task_c"], Cells(), task_pins={"task_c": TaskPin(version="3.0")})
    await run_campaign(_settings(tmp_path, extend=True), ["task_c"], Cells(), task_pins={"task_c": TaskPin(version="3.0")})
    assert {task: pin["version"] for task, pin in _manifest(tmp_path)["identity"]["tasks"].items()} == \
        {"task_a": "1.0", "task_b": "1.0", "task_c": "3.0"}


async def test_another_harness_version_is_refused_unless_allowed_and_then_recorded(tmp_path):
    await run_campaign(_settings(tmp_path), ["task_a"], Cells())
    manifest = _manifest(tmp_path)
    manifest["identity"]["harness_version"] = manifest["apex_voice_version"] = "0.0.1"
    (tmp_path / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(CampaignMismatchError, match=rf"harness_version: '0.0.1' → '{__version__}'.*"
                                                    r"--allow-version-change"):
        await run_campaign(_settings(tmp_path), ["task_a"], Cells())
    runner = Cells()
    await run_campaign(_settings(tmp_path, allow_version_change=True, extend=True), ["task_a", "task_b"], runner)
    assert [c.task_id for c in runner.calls] == ["task_b"]
    after = _manifest(tmp_path)
    assert (after["identity"]["harness_version"], after["earlier_versions"]) == (__version__, ["0.0.1"])


async def test_a_manifest_without_the_identity_resumes_only_when_allowed(tmp_path):
    """Older harnesses wrote a few identity keys, and ``condition: C2`` whatever the condition (item 15):
    the fields it did record must match; the rest it cannot vouch for, so resuming is a choice."""
    await run_campaign(_settings(tmp_path, {"condition": "C0"}), ["task_a"], Cells(condition="C0"))
    old = _manifest(tmp_path)
    for key in ("identity", "earlier_versions"):
        old.pop(key)
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**old, "condition": "C2"}))
    for record in tmp_path.glob("*/rep*/result.json"):
        record.write_text(json.dumps({k: v for k, v in json.loads(record.read_text()).items() if k != "identity"}))
    with pytest.raises(CampaignMismatchError, match=r"older harness that did not record provider_model, endpoint, "
                                                    r".*--allow-version-change"):
        await run_campaign(_settings(tmp_path, {"condition": "C0"}), ["task_a"], Cells(condition="C0"))
    with pytest.raises(CampaignMismatchError, match=r"max_turns: 44 → 8"):
        await run_campaign(_settings(tmp_path, {"condition": "C0", "max_turns": 8}, allow_version_change=True),
                           ["task_a"], Cells(condition="C0"))
    # The records still speak for themselves: a C3 start into that directory is refused by them.
    with pytest.raises(CampaignMismatchError, match="condition: 'C0' → 'C3'"):
        await run_campaign(_settings(tmp_path, {"condition": "C3", "acoustics": "moderate"}, allow_version_change=True),
                           ["task_a"], Cells())
    again = Cells(condition="C0")
    result = await run_campaign(_settings(tmp_path, {"condition": "C0"}, allow_version_change=True), ["task_a"], again)
    assert again.calls == [] and [o.status for o in result.outcomes] == ["loaded"]
    assert _manifest(tmp_path)["identity"]["condition"] == "C0"


# -- through the CLI, as a user meets each drift -------------------------------------------------------------


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, ["run", *args], env=env)


def _refusal(result) -> str:
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "Traceback" not in result.output
    return line


def _oracle(out: Path, *more: str) -> list[str]:
    return ["--data", str(DEMO_DATA), "--only", DEMO_TASK, "--sandbox", "local", "--out", str(out), *more]


@pytest.fixture
def chat_model(tmp_path, monkeypatch):
    """A C0 chat model served by the fake chat server: ``args(out, *more)`` builds its ``run`` command."""
    monkeypatch.setenv("FAKE_CHAT_KEY", API_KEY)
    policy = load_task(DEMO_DATA / "tasks" / DEMO_TASK).policy
    with serve_fake_chat_in_thread(FakeChatServer(policy=policy)) as fake:

        def args(out: Path, *more: str, endpoint: str = fake.base_url) -> list[str]:
            return ["--condition", "C0", "--model", "chat:fake-model", "--endpoint", endpoint,
                    "--api-key-env", "FAKE_CHAT_KEY", "--repeats", "1", *_oracle(out), *more]

        args.fake = fake  # type: ignore[attr-defined]
        yield args


def test_another_provider_model_into_the_same_out_is_refused_naming_it(chat_model, tmp_path):
    first = _run(*chat_model(tmp_path, "--provider-model", "model-a"))
    assert first.exit_code == 0, first.output
    line = _refusal(_run(*chat_model(tmp_path, "--provider-model", "model-b")))
    assert "provider_model: 'model-a' → 'model-b'" in line and "use a new --out" in line
    assert {request["model"] for request in chat_model.fake.requests} == {"model-a"}  # nothing ran with B


def test_another_endpoint_into_the_same_out_is_refused_naming_it(chat_model, tmp_path):
    assert _run(*chat_model(tmp_path)).exit_code == 0
    served = chat_model.fake.base_url
    elsewhere = served.replace("127.0.0.1", "localhost")
    line = _refusal(_run(*chat_model(tmp_path, endpoint=elsewhere)))
    assert f"endpoint: '{served}/chat/completions' → '{elsewhere}/chat/completions'" in line


def test_another_tool_latency_is_refused_naming_it(tmp_path):
    assert _run(*_oracle(tmp_path)).exit_code == 0
    line = _refusal(_run(*_oracle(tmp_path, "--tool-latency-ms", "250")))
    assert "tool_latency_ms: 0 → 250" in line


def test_a_judge_and_llm_observer_configured_since_are_refused_naming_them(tmp_path, monkeypatch):
    """Whether an OpenAI key is in the shell decides the judge and the act observer: the CLI warns the
    scores are not comparable, and now a resume refuses to mix them."""
    monkeypatch.setenv("APEX_VOICE_OBSERVER_CACHE", str(tmp_path / "observer.sqlite3"))
    out = tmp_path / "runs"
    assert _run(*_oracle(out)).exit_code == 0
    line = _refusal(_run(*_oracle(out), env={"APEX_VOICE_LLM_API_KEY": "sk-test"}))
    assert "observer: 'deterministic' → 'llm'" in line and "judge_model: none → 'gpt-" in line
    stored = _manifest(out)["identity"]
    assert (stored["observer"], stored["judge_model"]) == ("deterministic", None)


def test_another_act_observer_model_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("APEX_VOICE_OBSERVER_CACHE", str(tmp_path / "observer.sqlite3"))
    monkeypatch.setenv("APEX_VOICE_LLM_API_KEY", "sk-test")
    out = tmp_path / "runs"
    # Written as a campaign with an LLM observer of another model ran it (no network in this test).
    identity = MeasurementIdentity(model="oracle", observer="llm", observer_model="observer-a", judge_model="gpt-x")
    (out).mkdir()
    (out / MANIFEST_FILE).write_text(json.dumps({"model": "oracle", "display_name": "Oracle", "repeats": 1,
                                                 "max_turns": 44, "user_audio": "auto", "n_tasks": 0,
                                                 "identity": identity.model_dump(mode="json")}))
    line = _refusal(_run(*_oracle(out), env={"APEX_VOICE_OBSERVER_MODEL": "observer-b"}))
    assert "observer_model: 'observer-a' → 'observer-b'" in line


def test_a_rerun_without_its_only_does_not_grow_the_campaign_unless_asked(tmp_path):
    """The new user's day: ``run --only X --out D``, then ``run --out D``: 'resumed 1, ran 9'."""
    assert _run(*_oracle(tmp_path)).exit_code == 0
    everything = ["--data", str(DEMO_DATA), "--sandbox", "local", "--out", str(tmp_path)]
    line = _refusal(_run(*everything))
    assert "tasks: '1 tasks' → '10 tasks (new: " in line and "--extend to grow it" in line
    assert sorted(p.parent.parent.name for p in tmp_path.glob("*/rep*/result.json")) == [DEMO_TASK]
    grown = _run(*_oracle(tmp_path, "--only", OTHER_TASK, "--extend"))
    assert grown.exit_code == 0, grown.output
    assert "oracle: resumed 1, ran 1" in grown.output
    assert sorted(_manifest(tmp_path)["identity"]["tasks"]) == [OTHER_TASK, DEMO_TASK]
    # A start planning less than its campaign resumes it.
    assert "oracle: resumed 1, ran 0" in _run(*_oracle(tmp_path)).output


def test_a_condition_change_through_the_cli_is_refused_with_how_to_proceed(tmp_path):
    """Issue 23 item 1 as reported: ``run --only X --out D && run --condition C3 --only X --out D``."""
    assert _run(*_oracle(tmp_path)).exit_code == 0
    c3 = _run(*_oracle(tmp_path, "--condition", "C3"))
    line = _refusal(c3)
    assert "condition: 'C2' → 'C3'" in line and "acoustics: 'none' → 'moderate'" in line
    assert "use a new --out" in line
    assert "SUCCESS" not in c3.output


def test_the_identical_c0_command_resumes_through_the_cli(tmp_path):
    """Issue 23 item 15: the same C0 command run twice resumes (it was refused: 'condition C0, not C2')."""
    args = ["--condition", "C0", *_oracle(tmp_path)]
    assert _run(*args).exit_code == 0
    assert _manifest(tmp_path)["condition"] == "C0"
    run_id = json.loads((tmp_path / DEMO_TASK / "rep0" / "result.json").read_text())["run_id"]
    again = _run(*args)
    assert again.exit_code == 0, again.output
    assert "resumed 1, ran 0" in again.output
    assert json.loads((tmp_path / DEMO_TASK / "rep0" / "result.json").read_text())["run_id"] == run_id


def test_another_harness_version_through_the_cli_names_the_flag_that_resumes(tmp_path):
    args = _oracle(tmp_path)
    assert _run(*args).exit_code == 0
    manifest = _manifest(tmp_path)
    manifest["identity"]["harness_version"] = "0.0.1"
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**manifest, "apex_voice_version": "0.0.1"}))
    line = _refusal(_run(*args))
    assert f"harness_version: '0.0.1' → '{__version__}'" in line
    assert "or --allow-version-change to resume it with this version" in line
    allowed = _run(*args, "--allow-version-change")
    assert allowed.exit_code == 0, allowed.output
    assert "oracle: resumed 1, ran 0" in allowed.output
    assert _manifest(tmp_path)["earlier_versions"] == ["0.0.1"]


# -- what the identity is built from ---------------------------------------------------------------------------


def test_a_task_pin_changes_with_any_of_its_files_dataset_checksums(tmp_path):
    from harness.tasks.checksums import ChecksumManifest

    for task in ("task_a", "task_b"):
        (tmp_path / "tasks" / task).mkdir(parents=True)
        (tmp_path / "tasks" / task / "task.yaml").write_text(f"id: {task}\n")
    before = ChecksumManifest.write(tmp_path)
    pin = TaskPin.of(tmp_path / "tasks" / "task_a", "1.0", before)
    assert pin.version == "1.0" and pin.checksum and TaskPin.of(tmp_path / "tasks" / "task_a", "1.0", None).checksum is None
    (tmp_path / "tasks" / "task_b" / "task.yaml").write_text("id: task_b\nchanged: true\n")
    after = ChecksumManifest.write(tmp_path)
    assert TaskPin.of(tmp_path / "tasks" / "task_a", "1.0", after) == pin  # another task's file
    (tmp_path / "tasks" / "task_a" / "task.yaml").write_text("id: task_a\nchanged: true\n")
    assert TaskPin.of(tmp_path / "tasks" / "task_a", "1.0", ChecksumManifest.write(tmp_path)) != pin


def test_the_endpoint_is_recorded_without_credentials():
    from harness.results.measurement_identity import public_endpoint

    assert public_endpoint("wss://user:secret@api.example.com:8443/v1/realtime?model=m&api-key=sk-1&token=t") == \
        "wss://api.example.com:8443/v1/realtime?model=m&api-key=***&token=***"
    assert public_endpoint(None) is None


def test_the_runner_builds_the_identity_of_what_it_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("APEX_VOICE_OBSERVER_CACHE", str(tmp_path / "observer.sqlite3"))
    from harness.audio.acoustics import AcousticChain
    from harness.campaign.sandboxed_cell import SandboxedCellRunner
    from harness.chat_completions import ChatCompletions
    from harness.grading.judge import SemanticJudge
    from harness.user.llm_act_observer import LlmActClassifier
    from sandbox.backend import get_backend

    spec = get_model("gpt-realtime").with_options(endpoint="wss://127.0.0.1:9/v1/realtime", model="model-a")
    chain = AcousticChain.parse("reverb:rt60_s=0.5")
    observer = LlmActClassifier(ChatCompletions(model="obs-1", base_url=None, api_key="k"), cache=None)
    runner = SandboxedCellRunner(model=spec, backend=get_backend("local"), task_dirs={}, speech=lambda b: None,
                                 judge=SemanticJudge(api_key="k", model="judge-1"), condition="C3", acoustics=chain,
                                 seed=5, tool_latency_ms=120, observer=observer, max_turns=9, tool_mode="bridge")
    identity = runner.identity(user_audio="tts")
    assert identity == MeasurementIdentity(
        model="gpt-realtime", provider_model="model-a", endpoint="wss://127.0.0.1:9/v1/realtime", condition="C3",
        acoustics=chain.identity_text(), seed=5, user_audio="tts", tool_mode="bridge", tool_latency_ms=120,
        observer="llm", observer_model="obs-1", judge_model="judge-1", max_turns=9)
    assert identity.acoustics.startswith("reverb:") and "rt60_s=0.5" in identity.acoustics
    assert AcousticChain.parse("moderate").identity_text() == "moderate"
