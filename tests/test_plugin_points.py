"""The open plugin points: sandbox backends, field graders and conditions, found as installed entry
points (a real ``*.dist-info`` on ``sys.path``) or named as ``module:Class``, beside the built-ins."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from harness.agents.registry import get_model
from harness.campaign.hosted_agent import agent_isolation
from harness.campaign.text_cell import condition_problem
from harness.cli.main import app
from harness.conditions import ENTRY_POINT_GROUP as CONDITIONS_GROUP
from harness.conditions import UnknownConditionError, conditions, get_condition
from harness.field_graders import BUILTIN_GRADERS, field_graders, get_grader, grade_field
from harness.field_graders import ENTRY_POINT_GROUP as GRADERS_GROUP
from harness.grading.two_tier import grade_two_tier
from harness.session.session_config import DuplexConfig
from harness.session.turn_policy import FullDuplex, TurnBased, turn_policy
from harness.tasks.errors import TaskLoadError
from harness.tasks.loader import load_task
from harness.user.recovery import RecoveryPlanner
from sandbox.backend import ENTRY_POINT_GROUP as BACKENDS_GROUP
from sandbox.backend import get_backend, known_backends
from sandbox.docker_backend import DockerBackend
from sandbox.errors import UnknownBackendError
from sandbox.local import LocalBackend
from tests.conftest import DEMO_DATA
from tests.entry_point_dist import install_entry_points
from tests.package_editing import edit, editable_copy
from tests.plugin_examples import ContainerCapableBackend, SubprocessBackend

runner = CliRunner()


@pytest.fixture(autouse=True)
def fresh_registries() -> Iterator[None]:
    """The grader and condition registries are read once per process; each test installs its own."""
    field_graders.cache_clear()
    conditions.cache_clear()
    yield
    field_graders.cache_clear()
    conditions.cache_clear()


# --- sandbox backends -------------------------------------------------------------------------


def test_an_installed_backend_is_found_by_its_entry_point_name(tmp_path, monkeypatch) -> None:
    install_entry_points(tmp_path, monkeypatch, BACKENDS_GROUP, {"subprocess": "tests.plugin_examples:SubprocessBackend"})
    backend = get_backend("subprocess")
    assert type(backend) is SubprocessBackend and backend.name == "subprocess"
    assert known_backends() == ["auto", "local", "docker", "subprocess"]


def test_a_backend_named_as_module_and_class() -> None:
    assert type(get_backend("tests.plugin_examples:SubprocessBackend")) is SubprocessBackend


def test_an_unknown_backend_is_a_usage_error_listing_the_installed_ones(tmp_path, monkeypatch) -> None:
    install_entry_points(tmp_path, monkeypatch, BACKENDS_GROUP, {"subprocess": "tests.plugin_examples:SubprocessBackend"})
    with pytest.raises(UnknownBackendError, match=r"unknown sandbox backend 'cloud' \(known: auto, local, docker, "
                                                  r"subprocess, or package.module:Class\)"):
        get_backend("cloud")


def test_a_name_that_is_not_a_backend_class_is_refused() -> None:
    with pytest.raises(UnknownBackendError, match="not a SandboxBackend subclass"):
        get_backend("tests.plugin_examples:DIGITS_ONLY")
    with pytest.raises(UnknownBackendError, match="has no attribute 'Nope'"):
        get_backend("tests.plugin_examples:Nope")


def test_agent_containers_are_a_capability_of_the_backend_not_its_name() -> None:
    assert DockerBackend.runs_agent_containers and not LocalBackend.runs_agent_containers
    assert ContainerCapableBackend.runs_agent_containers and ContainerCapableBackend.name != "docker"
    hosted = get_model("tests.plugin_examples:SomeAdapter")  # out of tree: hosted, never imported here
    assert agent_isolation(hosted, containers=True) == "container"
    assert agent_isolation(hosted, containers=False) == "process"
    native_oracle = get_model("native-oracle")  # an agent image, or in-process without containers
    assert agent_isolation(native_oracle, containers=ContainerCapableBackend.runs_agent_containers) == "container"
    assert agent_isolation(native_oracle, containers=False) == "builtin"


def test_run_with_an_unknown_sandbox_exits_2_naming_it() -> None:
    result = runner.invoke(app, ["run", "--sandbox", "cloud", "--only", "demo_benefits_enrollment_001"])
    assert result.exit_code == 2, result.output
    assert "error: --sandbox: unknown sandbox backend 'cloud'" in result.output


# --- field graders ----------------------------------------------------------------------------


def test_an_installed_grader_joins_the_registry_after_the_builtins(tmp_path, monkeypatch) -> None:
    install_entry_points(tmp_path, monkeypatch, GRADERS_GROUP, {
        "digits_only": "tests.plugin_examples:DIGITS_ONLY", "words": "tests.plugin_examples:WORDS"})
    assert list(field_graders()) == [*BUILTIN_GRADERS, "digits_only", "words"]
    assert grade_field("digits_only", "12-34 5", "12345") == 1.0
    assert get_grader("words").judge == "text"


async def test_an_installed_grader_says_whether_the_judge_may_decide(tmp_path, monkeypatch) -> None:
    install_entry_points(tmp_path, monkeypatch, GRADERS_GROUP, {
        "digits_only": "tests.plugin_examples:DIGITS_ONLY", "words": "tests.plugin_examples:WORDS"})
    asked: list[str] = []

    async def judge(field: str, pred: object, gold: object, context: str) -> bool:
        asked.append(field)
        return True

    never = await grade_two_tier("digits_only", "12-35", "12345", None, field="account", judge=judge,
                                 context="form", artifact=None)
    text = await grade_two_tier("words", "Client  visit", "client onsite", None, field="purpose", judge=judge,
                                context="form", artifact=None)
    assert (never.score, never.tier) == (0.0, "deterministic")
    assert (text.score, text.tier) == (1.0, "judge") and asked == ["purpose"]


def test_a_builtin_grader_cannot_be_replaced(tmp_path, monkeypatch) -> None:
    install_entry_points(tmp_path, monkeypatch, GRADERS_GROUP, {"exact": "tests.plugin_examples:DIGITS_ONLY"})
    with pytest.raises(ValueError, match="'exact' is a built-in field grader and cannot be replaced"):
        field_graders()


def test_a_package_may_name_an_installed_grader_and_an_unknown_one_lists_them(toy_form, tmp_path, monkeypatch) -> None:
    task = editable_copy(toy_form, tmp_path / "pkg")
    edit(task, "grading/gold.yaml", "expected: E1042, grader: exact", "expected: E1042, grader: digits_only")
    with pytest.raises(TaskLoadError) as unknown:
        load_task(task)
    assert str(unknown.value).startswith(
        "task 'toy_form_001': grading/gold.yaml: artifact_expectations[0].fields[0].grader = 'digits_only': "
        "not one of exact, casefold_exact")
    install_entry_points(tmp_path / "site", monkeypatch, GRADERS_GROUP, {"digits_only": "tests.plugin_examples:DIGITS_ONLY"})
    field_graders.cache_clear()
    assert load_task(task).gold.artifact_expectations[0].fields[0].grader == "digits_only"


def test_a_workspace_schema_grader_is_checked_at_load(toy_form, tmp_path) -> None:
    """The server carries grader names as strings; the harness refuses an unknown one when loading."""
    task = editable_copy(toy_form, tmp_path)
    edit(task, "workspace/initial_workspace.json", '"grader": "casefold_exact"', '"grader": "casefold"')
    with pytest.raises(TaskLoadError, match=r"workspace/initial_workspace.json: artifacts.expense_1.schema.fields\[1\]"
                                            r".grader = 'casefold': not one of exact, casefold_exact"):
        load_task(task)


# --- conditions -------------------------------------------------------------------------------


def test_the_published_conditions_and_what_each_runs() -> None:
    assert {c.name: (c.session, c.acoustics) for c in conditions().values()} == {
        "C0": ("text", False), "C1": ("voice", False), "C2": ("voice", False), "C3": ("voice", True)}
    with pytest.raises(UnknownConditionError, match="unknown condition 'C9'; known conditions: C0, C1, C2, C3"):
        get_condition("C9")


def test_an_installed_condition_is_read_by_the_campaign_and_the_user(tmp_path, monkeypatch, toy_form) -> None:
    install_entry_points(tmp_path, monkeypatch, CONDITIONS_GROUP, {
        "T1": "tests.plugin_examples:TEXT_ONLY", "C3-noisy": "tests.plugin_examples:NOISY_DUPLEX"})
    assert list(conditions()) == ["C0", "C1", "C2", "C3", "T1", "C3-noisy"]
    voice, text = get_model("gpt-realtime"), get_model("chat:some-model")
    assert condition_problem(voice, "T1") == (
        "model 'gpt-realtime' is a realtime voice agent; --condition T1 needs a text agent (chat:MODEL, oracle, noop)")
    assert condition_problem(text, "C3-noisy") == (
        "model 'chat:some-model' is a text agent: use --condition C0, T1, or cascade:some-model for voice")
    assert condition_problem(voice, "C3-noisy") is None
    flow = load_task(toy_form).flow
    # The user of a text condition asks for a wrap-up before signing off; a voice condition's just signs off.
    text_lines = RecoveryPlanner.for_condition(flow, "T1").runner_lines
    assert text_lines == RecoveryPlanner.for_condition(flow, "C0").runner_lines
    assert text_lines != RecoveryPlanner.for_condition(flow, "C2").runner_lines
    assert RecoveryPlanner.for_condition(flow, "C3-noisy").runner_lines == RecoveryPlanner.for_condition(
        flow, "C2").runner_lines


def test_an_installed_condition_brings_its_turn_policy_into_the_session(tmp_path, monkeypatch) -> None:
    install_entry_points(tmp_path, monkeypatch, CONDITIONS_GROUP, {
        "C3-noisy": "tests.plugin_examples:NOISY_DUPLEX", "C1-polite": "tests.plugin_examples:POLITE_VOICE"})
    noisy, polite = turn_policy("C3-noisy"), turn_policy("C1-polite")
    assert type(noisy) is FullDuplex and noisy.degraded_audio
    assert isinstance(polite, TurnBased) and not polite.degraded_audio
    with pytest.raises(ValueError, match="condition C3-noisy needs an acoustics chain"):
        DuplexConfig(speech=None, condition="C3-noisy")  # type: ignore[arg-type]


@pytest.mark.parametrize("condition", ["C3-noisy", "T1"])
def test_an_installed_condition_runs_a_campaign_cell_and_is_recorded_by_its_name(tmp_path, monkeypatch, condition) -> None:
    """A voice condition from another distribution failed in every cell (the session knew only its
    own three turn policies); a text one was recorded as C0."""
    install_entry_points(tmp_path / "site", monkeypatch, CONDITIONS_GROUP, {
        "T1": "tests.plugin_examples:TEXT_ONLY", "C3-noisy": "tests.plugin_examples:NOISY_DUPLEX"})
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", "--data", str(DEMO_DATA), "--only", "demo_warranty_advice_001", "--sandbox",
                                 "local", "--condition", condition, "--out", str(out)])
    assert result.exit_code == 0, result.output
    record = json.loads((out / "demo_warranty_advice_001" / "rep0" / "result.json").read_text())
    assert (record["condition"], record["pts"], record["identity"]["condition"]) == (condition, 1, condition)


def test_run_with_an_unknown_condition_exits_2_listing_the_known() -> None:
    result = runner.invoke(app, ["run", "--condition", "C9"])
    assert result.exit_code == 2, result.output
    assert "error: --condition: unknown condition 'C9'; known conditions: C0, C1, C2, C3" in result.output
