"""The import graph between the project's packages: no cycle, and every import points down the layers.

DESIGN.md's direction is ``harness/cli → tui → harness → {mcp_servers, sandbox}``, with errors at the
bottom and no cycles. Inside ``harness`` the same rule holds per subpackage (and per top-level
module): :data:`LAYERS` below is the table, lowest first, and a unit may import only units of lower
layers, never one of its own layer. A new subpackage must be placed in the table deliberately.

Every import counts: top-level, function-local (a lazy import is still a dependency) and
``TYPE_CHECKING`` ones (a type-only cycle is still a cycle for the type checker and the reader).
The graph is read from the sources with :mod:`ast`; nothing is imported.

Inside a unit the same holds module by module: no import circle between two modules anywhere in
the house (``harness/campaign``'s plan, runner and executors; ``mcp_servers``' server, control
API and MCP app), which the unit graph cannot see.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "mcp_servers", "sandbox", "tui")

#: Lowest first. A unit imports only units of strictly lower layers.
LAYERS: tuple[tuple[str, ...], ...] = (
    # The task server and the isolation import nothing of ours (the server image holds no harness code).
    ("mcp_servers", "sandbox"),
    # Foundations: the version, blame (its codes, exception types and origin table), atomic files, the first-writer store, the chat client, counts in words,
    # and the registries of field graders and conditions (the task loader checks grader names).
    ("harness", "harness.blame", "harness.atomic_write", "harness.first_writer_store", "harness.chat_completions",
     "harness.field_graders", "harness.conditions", "harness.counted"),
    # The task format and the event stream.
    ("harness.tasks", "harness.events"),
    # What reads a task: the user simulator, audio, metrics over events, grading.
    # Audio below what measures it: the metrics segment speech as the runner does (one definition).
    ("harness.audio",),
    ("harness.user", "harness.metrics", "harness.grading"),
    ("harness.agents",),
    # The run directory's format (result records, session files, grading inputs) and its readers.
    ("harness.results",),
    ("harness.session",),
    ("harness.campaign", "harness.validate"),
    ("tui",),
    ("harness.cli",),
)

Edge = tuple[str, str]
Graph = Mapping[str, Mapping[str, list[str]]]


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _exists(module: str) -> bool:
    base = ROOT.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def unit_of(module: str) -> str | None:
    """The graph node a module belongs to: ``harness.<child>`` inside harness, else its package."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None
    if parts[0] == "harness" and len(parts) > 1 and _exists(f"harness.{parts[1]}"):
        return f"harness.{parts[1]}"
    return parts[0]


def _imported_modules(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterable[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    # ``from harness import blame`` imports the package harness.blame, not the package harness.
    named = [f"{base}.{alias.name}" for alias in node.names if _exists(f"{base}.{alias.name}")]
    return named if named and len(named) == len(node.names) else [base, *named]


def import_graph() -> dict[str, dict[str, list[str]]]:
    """unit → imported unit → where (``file:line``), over every import in the four packages."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module, is_package = _module_name(path)
            source = unit_of(module)
            assert source is not None
            graph[source]  # every unit is a node, importing something or not
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                for target in _imported_modules(node, module, is_package):
                    unit = unit_of(target)
                    if unit is not None and unit != source:
                        graph[source][unit].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return graph


def _nearest_module(name: str) -> str | None:
    """The module (or package) a dotted import target names: ``harness.x.y.Class`` → ``harness.x.y``."""
    parts = name.split(".")
    while parts and not _exists(".".join(parts)):
        parts.pop()
    return ".".join(parts) if parts and parts[0] in PACKAGES else None


def module_graph() -> dict[str, dict[str, list[str]]]:
    """module → imported module → where (``file:line``), over every import in the four packages."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module, is_package = _module_name(path)
            graph[module]
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                for target in _imported_modules(node, module, is_package):
                    imported = _nearest_module(target)
                    # A package's ``__init__`` importing its own modules is how a package exports: not a circle.
                    if imported is not None and imported != module and not (is_package and imported.startswith(f"{module}.")):
                        graph[module][imported].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return graph


def find_cycle(graph: Graph) -> list[str] | None:
    """One cycle as its path of units (first == last), or ``None``."""
    state: dict[str, str] = {}  # "open" while on the DFS stack, "done" after
    stack: list[str] = []

    def visit(unit: str) -> list[str] | None:
        state[unit] = "open"
        stack.append(unit)
        for target in sorted(graph.get(unit, {})):
            if state.get(target) == "open":
                return [*stack[stack.index(target):], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[unit] = "done"
        return None

    for unit in sorted(graph):
        if unit not in state and (cycle := visit(unit)):
            return cycle
    return None


def describe_path(graph: Graph, path: list[str]) -> str:
    return "\n".join(f"  {a} -> {b}  ({', '.join(graph[a][b][:3])})" for a, b in zip(path, path[1:], strict=False))


def layering_violations(graph: Graph, layers: tuple[tuple[str, ...], ...]) -> list[str]:
    rank = {unit: index for index, layer in enumerate(layers) for unit in layer}
    problems = [f"{unit} is in no layer of the table" for unit in sorted(graph) if unit not in rank]
    for source in sorted(graph):
        for target, where in sorted(graph[source].items()):
            if source in rank and target in rank and rank[target] >= rank[source]:
                problems.append(f"{source} (layer {rank[source]}) imports {target} (layer {rank[target]}): "
                                f"{', '.join(where[:3])}")
    return problems


def test_no_import_cycle_between_packages() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle:\n" + describe_path(graph, cycle or [])


def test_no_import_cycle_between_modules() -> None:
    graph = module_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle between modules:\n" + describe_path(graph, cycle or [])


def test_the_module_graph_sees_a_circle_inside_a_unit() -> None:
    """Where the unit graph sees one node, the module graph sees the modules and their imports."""
    graph = module_graph()
    assert "harness.campaign.plan" in graph["harness.campaign.campaign"]
    assert "harness.campaign.plan" in graph["harness.campaign.ray_executor"]
    # The plan imports no executor and no runner: the CLI injects them.
    assert not {m for m in graph["harness.campaign.plan"] if m.startswith("harness.campaign.")}
    assert "mcp_servers.task_server" in graph["mcp_servers.control_api"]
    circle = {"a": {"b": ["a.py:1"]}, "b": {"a": ["b.py:9"]}}
    assert find_cycle(circle) == ["a", "b", "a"]


def test_every_import_points_down_the_layers() -> None:
    problems = layering_violations(import_graph(), LAYERS)
    assert not problems, "imports against the layering (tests/test_import_graph.py LAYERS):\n" + "\n".join(problems)


def test_every_unit_of_the_table_exists() -> None:
    """A unit renamed or removed leaves the table; the table must not describe packages that are gone."""
    graph = import_graph()
    assert [unit for layer in LAYERS for unit in layer if unit not in graph] == []


def _imports_of(source: str, module: str, *, is_package: bool = False) -> list[str]:
    return [target for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import | ast.ImportFrom)
            for target in _imported_modules(node, module, is_package)]


def test_the_graph_sees_lazy_type_only_and_relative_imports() -> None:
    """The checker reads the imports that an import-time check would miss."""
    lazy_and_typed = "def f():\n    import tui.live\nif TYPE_CHECKING:\n    from harness.tasks.models import Gold\n"
    assert _imports_of(lazy_and_typed, "harness.cli.run_cmd") == ["tui.live", "harness.tasks.models"]
    assert _imports_of("from ..state.reducer import reduce", "tui.sources.replay") == ["tui.state.reducer"]
    assert _imports_of("from . import replay", "tui.sources", is_package=True) == ["tui.sources.replay"]
    # ``from harness import __version__`` is the root package; ``from harness import blame`` its subpackage.
    assert _imports_of("from harness import __version__", "harness.tasks.dataset") == ["harness"]
    assert [unit_of(t) for t in _imports_of("from harness import blame", "x")] == ["harness.blame"]
    # On the real code: ``run --tui`` imports the TUI inside the command.
    assert any(w.startswith("harness/cli/run_cmd.py") for w in import_graph()["harness.cli"]["tui"])


def test_a_cycle_is_reported_with_its_path() -> None:
    graph = {"a": {"b": ["a.py:1"]}, "b": {"c": ["b.py:2"]}, "c": {"a": ["c.py:3"]}, "d": {"a": ["d.py:4"]}}
    cycle = find_cycle(graph)
    assert cycle == ["a", "b", "c", "a"]
    assert describe_path(graph, cycle) == "  a -> b  (a.py:1)\n  b -> c  (b.py:2)\n  c -> a  (c.py:3)"
    assert find_cycle({"a": {"b": ["a.py:1"]}, "b": {}}) is None


def test_an_import_up_or_across_a_layer_is_named() -> None:
    graph = {"low": {}, "high": {"low": ["high.py:1"]}, "peer": {"high": ["peer.py:7"]}, "stray": {}}
    problems = layering_violations(graph, (("low",), ("high", "peer")))
    assert problems == ["stray is in no layer of the table",
                        "peer (layer 1) imports high (layer 1): peer.py:7"]
