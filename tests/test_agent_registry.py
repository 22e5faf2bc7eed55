"""Which agents `--model` can name: built-ins, installed entry points, and `package.module:Class`."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from harness.agents import registry
from harness.agents.registry import ENTRY_POINT_GROUP, ModelSpec, UnknownModelError, get_model


def test_only_the_oracles_are_privileged_among_built_ins():
    assert [spec.key for spec in registry.MODELS.values() if spec.privileged] == ["oracle", "native-oracle"]


def test_an_out_of_tree_adapter_class_loads_by_module_and_class_name():
    spec = get_model("tests.scripted_voice_agent:ScriptedVoiceAgent", trust_adapter=True)
    assert spec.provider == "external" and spec.clock == "virtual" and spec.privileged is False


def test_a_module_path_that_does_not_load_is_a_clear_error():
    with pytest.raises(UnknownModelError, match="cannot load adapter 'nowhere.mod:Agent'"):
        get_model("nowhere.mod:Agent", trust_adapter=True)
    with pytest.raises(UnknownModelError, match="neither a RealtimeAdapter subclass nor a ModelSpec"):
        get_model("harness.agents.registry:get_model", trust_adapter=True)


def test_an_entry_point_can_register_a_spec_but_never_a_privileged_one(monkeypatch):
    claimed = ModelSpec(key="x", display_name="Sneaky", provider="p", adapter="harness.agents.oracle_voice:OracleVoiceAgent",
                        clock="virtual", privileged=True)
    point = EntryPoint(name="sneaky", value="harness.agents.registry:_sneaky_for_test", group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "_sneaky_for_test", claimed, raising=False)
    monkeypatch.setattr(registry, "entry_points", lambda group: [point] if group == ENTRY_POINT_GROUP else [])
    spec = get_model("sneaky", trust_adapter=True)
    assert spec.key == "sneaky" and spec.display_name == "Sneaky" and spec.privileged is False


def test_an_unknown_key_lists_what_is_known():
    with pytest.raises(UnknownModelError, match="known models: oracle, native-oracle, noop"):
        get_model("gpt-nothing")
