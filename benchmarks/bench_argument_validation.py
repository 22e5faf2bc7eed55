"""Cost of checking one tool call's arguments, and its share of the whole call in process.

    .venv/bin/python benchmarks/bench_argument_validation.py [--calls 20000]

On ``toy_form_001`` (the reference fixture): a valid ``update_expense`` of three fields, a valid
``request_approval``, and an ``update_expense`` with an unknown key and an ill-typed value (refused).
For each, the checks every call pays: the tool's arguments against the schema the model is shown
(``ToolArgumentsValidator``, built once per tool) plus, for a write, what the handler checks of the
field values (``validate_field_values``: their size, their types already checked); then the whole
``TaskEnvironment.call_tool`` (log, handler, record).
Figures are the best of 5 rounds (the least disturbed by the machine's load), in µs per call.

Measured on the 2-core project machine (busy), best of 5 x 20,000 calls, before -> after the
``jsonschema`` checks (issue 34 §6; before: the hand-written type checks of ``argument_validation``):
checks 8 -> 29 µs for the valid write, 0.5 -> 7.8 µs for the approval request, 7.5 -> 36 µs for the
refused write; the whole in-process call 52 -> 77, 27 -> 37 and 35 -> 60 µs. Checking the values
twice (the tool's schema, then the handler) made the valid write's checks 48 µs: the handler skips
what the schema checked. The server's own cost per call with its journal is about 200 µs
(``bench_server_limits.py``).
"""

from __future__ import annotations

import argparse
import timeit
from pathlib import Path
from typing import Any

from harness.tasks.loader import load_task
from mcp_servers.argument_validation import ToolArgumentsValidator, validate_field_values
from mcp_servers.environment import TaskEnvironment
from mcp_servers.public_bundle import PublicBundle

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "reference-fixtures" / "toy_form_001"
ROUNDS = 5
#: Calls per environment (its set-up is counted too): a session's call log holds 2,000.
CALLS_PER_SESSION = 1000

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("valid write", "update_expense",
     {"fields": {"employee_id": "E1042", "trip_purpose": "Lisbon customer summit", "total_amount": 240.5}}),
    ("valid approval request", "request_approval", {"target_id": "expense_1"}),
    ("refused write", "update_expense", {"fields": {"totl": 5, "total_amount": "240"}}),
]  # fmt: skip


def _validation_us(bundle: PublicBundle, tool_name: str, args: dict[str, Any], calls: int) -> float:
    spec = bundle.tools.get(tool_name)
    assert spec is not None

    def schema_of(artifact_id: str) -> Any:
        definition = bundle.workspace.artifacts.get(artifact_id)
        return None if definition is None else definition.schema_

    validator = ToolArgumentsValidator(spec, schema_of)
    # As ``update_artifact`` does: the values' types again only if the tool's schema did not check them.
    schema = None if validator.fields_artifact == "expense_1" else schema_of("expense_1")

    def check() -> None:
        validator.problems(args)
        if "fields" in args:
            validate_field_values("expense_1", schema, args["fields"])

    return min(timeit.repeat(check, number=calls, repeat=ROUNDS)) / calls * 1e6


def _call_us(bundle: PublicBundle, tool_name: str, args: dict[str, Any], calls: int) -> float:
    sessions = max(1, calls // CALLS_PER_SESSION)

    def session() -> None:
        env = TaskEnvironment(bundle, wall_clock_ns=lambda: 0)
        for _ in range(CALLS_PER_SESSION):
            env.call_tool(tool_name, args)

    return min(timeit.repeat(session, number=sessions, repeat=ROUNDS)) / (sessions * CALLS_PER_SESSION) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    options = parser.parse_args()
    bundle = load_task(FIXTURE).public_bundle()
    print(f"best of {ROUNDS} x {options.calls} calls, µs per call")
    for label, tool_name, args in CASES:
        checks = _validation_us(bundle, tool_name, args, options.calls)
        whole = _call_us(bundle, tool_name, args, options.calls)
        share = checks / whole
        print(f"{label:24s} checks {checks:7.1f}   whole call {whole:7.1f}   checks / call {share:5.0%}")


if __name__ == "__main__":
    main()
