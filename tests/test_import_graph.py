"""The import graph of the app modules: no cycles, imports between apps one way,
and every deferred import says why.

Read from the source with `ast` (nothing is imported, so a cycle cannot hide
behind whatever happened to load first). An edge is a module-level import
from one app module to another; imports under `if TYPE_CHECKING:` never run
and are left out. An import inside a function must carry a one-line reason
(README "Map": it breaks a real cycle or defers a heavy load); one whose
reason names a cycle must break one that really exists.

`python tests/test_import_graph.py` prints the graph's summary and every
import inside a function with its reason.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("incidentdesk", "incidents", "knowledge", "copilot")

# Inner imports without a reason that are accepted for now, as "path: statement":
# only ones in files another change owns (the offline engine, the router, query
# parsing, ranking, selectors, evaluation), each named in issue 15's note. Empty
# while every inner import has its reason.
ALLOWED_WITHOUT_REASON: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Import:
    """One import statement of an app module, with what it reaches."""

    module: str
    path: str
    line: int
    targets: tuple[str, ...]  # app modules it executes (empty: a third-party import)
    text: str
    reason: str  # the comment that explains an inner import ("" when there is none)


@dataclass(frozen=True)
class Graph:
    edges: dict[str, set[str]]
    inner: list[Import]
    type_only: list[Import]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _app_files() -> dict[str, Path]:
    return {
        _module_name(path): path
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts
    }


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The app module `name` is, or the closest package above it (None: not ours)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _with_packages(target: str, importer: str) -> Iterator[str]:
    """`target` and the packages above it that importing it runs first; the
    importer's own packages are already running and are no edge."""
    parts = target.split(".")
    for end in range(1, len(parts) + 1):
        name = ".".join(parts[:end])
        if not (importer == name or importer.startswith(name + ".")):
            yield name


def _targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> set[str]:
    """The app modules one import statement executes."""
    modules = _app_files()
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: count the dots up from the importer's package
            package = importer if is_package else importer.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        # `from package import submodule` executes the submodule too.
        names = [f"{base}.{alias.name}" for alias in node.names] + [base]
    found = {resolved for name in names if (resolved := _resolve(name, modules))}
    return {name for target in found for name in _with_packages(target, importer)}


def _comments(source: str) -> dict[int, str]:
    """Comments by line, as the tokenizer sees them (not '#' inside strings)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {
        token.start[0]: token.string.lstrip("# ").strip()
        for token in tokens
        if token.type == tokenize.COMMENT
    }


def _reason(node: ast.stmt, comments: dict[int, str], lines: list[str], previous: str) -> str:
    """The comment on the import's lines, or on the comment line just above it;
    an import right below an explained one shares its reason (one group)."""
    for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
        if line in comments:
            return comments[line]
    above = node.lineno - 1
    if above in comments and lines[above - 1].lstrip().startswith("#"):
        return comments[above]
    return previous


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    """Sorts one module's imports into module-level, type-only and inner ones."""

    def __init__(self, module: str, path: Path, source: str) -> None:
        self.module, self.path, self.source = module, path, source
        self.lines = source.splitlines()
        self.comments = _comments(source)
        self.depth = 0  # functions we are inside
        self.type_only = False
        self.found: list[tuple[str, Import]] = []  # ("module" | "type" | "inner", import)
        self._last: tuple[int, str] = (0, "")  # (end line, reason) of the last inner import

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node):
            self.generic_visit(node)
            return
        self.type_only = True
        for child in node.body:
            self.visit(child)
        self.type_only = False
        for child in node.orelse:
            self.visit(child)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        kind = "type" if self.type_only else "inner" if self.depth else "module"
        last_line, last_reason = self._last
        previous = last_reason if kind == "inner" and last_line == node.lineno - 1 else ""
        reason = _reason(node, self.comments, self.lines, previous) if kind == "inner" else ""
        is_package = self.path.name == "__init__.py"
        found = Import(
            module=self.module,
            path=str(self.path.relative_to(ROOT)),
            line=node.lineno,
            targets=tuple(sorted(_targets(node, self.module, is_package))),
            text=ast.get_source_segment(self.source, node) or "",
            reason=reason,
        )
        if kind == "inner":
            self._last = (node.end_lineno or node.lineno, reason)
        self.found.append((kind, found))

    visit_Import = visit_ImportFrom = _import


@cache
def import_graph() -> Graph:
    """Every app module's imports, read from its source."""
    edges: dict[str, set[str]] = {}
    inner: list[Import] = []
    type_only: list[Import] = []
    for module, path in _app_files().items():
        collector = _Collector(module, path, path.read_text(encoding="utf-8"))
        collector.visit(ast.parse(collector.source, filename=str(path)))
        edges.setdefault(module, set())
        for kind, found in collector.found:
            if kind == "module":
                edges[module].update(t for t in found.targets if t != module)
            else:
                (inner if kind == "inner" else type_only).append(found)
    return Graph(edges=edges, inner=inner, type_only=type_only)


def path_between(edges: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A shortest chain of module-level imports from `start` to `goal` (breadth first)."""
    came_from: dict[str, str | None] = {start: None}
    queue = [start]
    for current in queue:
        if current == goal:
            chain = [current]
            while (before := came_from[chain[-1]]) is not None:
                chain.append(before)
            return chain[::-1]
        for target in sorted(edges.get(current, ())):
            if target not in came_from:
                came_from[target] = current
                queue.append(target)
    return None


def _shortest_cycle(edges: dict[str, set[str]], module: str) -> list[str] | None:
    chains = [chain for target in edges[module] if (chain := path_between(edges, target, module))]
    return [module, *min(chains, key=len)] if chains else None


def cycles(edges: dict[str, set[str]]) -> list[tuple[list[str], int]]:
    """Per tangle of modules that import each other (directly or not): a shortest
    cycle through its first module, and how many modules the tangle holds."""
    found: list[tuple[list[str], int]] = []
    tangled: set[str] = set()
    for module in sorted(edges):
        if module in tangled or not (cycle := _shortest_cycle(edges, module)):
            continue
        members = {other for other in edges if path_between(edges, module, other)}
        members = {other for other in members if path_between(edges, other, module)}
        tangled |= members
        found.append((cycle, len(members)))
    return found


def _describe(found: list[tuple[list[str], int]]) -> str:
    return "\n".join(f"{' -> '.join(cycle)}  ({size} modules tangled)" for cycle, size in found)


def _key(found: Import) -> str:
    return f"{found.path}: {' '.join(found.text.split())}"


def _claims_a_cycle(reason: str) -> bool:
    return "cycle" in reason.lower()


def test_module_level_imports_between_app_modules_form_no_cycle() -> None:
    found = cycles(import_graph().edges)
    assert not found, "import cycles:\n" + _describe(found)


def test_every_import_inside_a_function_says_why() -> None:
    missing = [
        f"{found.path}:{found.line}: {found.text}"
        for found in import_graph().inner
        if not found.reason and _key(found) not in ALLOWED_WITHOUT_REASON
    ]
    assert not missing, "imports inside functions without a reason comment:\n" + "\n".join(missing)


def test_an_import_said_to_break_a_cycle_breaks_a_real_one() -> None:
    """Moved to the top of its module, the import would close a cycle."""
    edges = import_graph().edges
    untrue = [
        f"{found.path}:{found.line}: {found.text}  # {found.reason}"
        for found in import_graph().inner
        if _claims_a_cycle(found.reason)
        and not any(path_between(edges, target, found.module) for target in found.targets)
    ]
    assert not untrue, "said to break a cycle, but none would close:\n" + "\n".join(untrue)


def test_the_allow_list_names_only_imports_that_still_lack_a_reason() -> None:
    inner = import_graph().inner
    unexplained = {_key(found) for found in inner if not found.reason}
    stale = sorted(ALLOWED_WITHOUT_REASON - unexplained)
    assert not stale, f"remove from ALLOWED_WITHOUT_REASON: {stale}"


# README "Map": copilot -> knowledge -> incidents -> incidentdesk, never back; only
# the project's wiring imports the apps, and richtext.py their Django-free parsing.
LAYERS = {"incidentdesk": 0, "incidents": 1, "knowledge": 2, "copilot": 3}
WIRING = ("incidentdesk.settings", "incidentdesk.urls", "incidentdesk.asgi",
          "incidentdesk.celery", "incidentdesk.demo", "incidentdesk.management",
          "incidentdesk.api")  # fmt: skip
MAY_IMPORT_BACK = {"incidentdesk.richtext": ("incidents.parsing", "knowledge.parsing")}


def _points_back(module: str, target: str) -> bool:
    if LAYERS[target.split(".")[0]] <= LAYERS[module.split(".")[0]]:
        return False
    if module.startswith(WIRING):
        return False
    allowed = MAY_IMPORT_BACK.get(module, ())
    return not any(target == name or name.startswith(target + ".") for name in allowed)


def _imports_where(keep: Callable[[str, str], bool]) -> list[str]:
    """Every "module -> target" a module-level or inner import makes that `keep` picks."""
    graph = import_graph()
    imports = [(module, targets) for module, targets in graph.edges.items()]
    imports += [(found.module, set(found.targets)) for found in graph.inner]
    return sorted(
        f"{module} -> {target}"
        for module, targets in imports
        for target in targets
        if keep(module, target)
    )


def test_imports_between_apps_point_one_way() -> None:
    back = _imports_where(_points_back)
    assert not back, "imports against the apps' direction:\n" + "\n".join(back)


def _is_layer(module: str, layer: str) -> bool:
    """`selectors`, `dataset_selectors`, `copilot.tickets.selectors` are all selectors."""
    return module.rpartition(".")[2].endswith(layer)


def test_selectors_never_import_services() -> None:
    """README "Map": services may call selectors, never the other way round."""
    upward = _imports_where(
        lambda module, target: _is_layer(module, "selectors") and _is_layer(target, "services")
    )
    assert not upward, "selectors importing services:\n" + "\n".join(upward)


def test_the_graph_sees_the_imports_it_checks() -> None:
    """A guard on the reader itself: known edges and a known deferred import show up."""
    graph = import_graph()
    assert "incidents.models" in graph.edges["incidents.services"]
    assert "copilot.agent" in graph.edges["copilot.replies"]
    assert any(f.module == "incidents.services" for f in graph.inner)
    assert any(f.module == "copilot.intake.services" for f in graph.type_only)


def _report() -> None:
    graph = import_graph()
    edge_count = sum(len(targets) for targets in graph.edges.values())
    print(f"{len(graph.edges)} app modules, {edge_count} module-level imports between them")
    found = cycles(graph.edges)
    print(f"cycles: {len(found)}")
    if found:
        print(_describe(found))
    print(f"imports inside functions: {len(graph.inner)}")
    for item in graph.inner:
        closes = [
            chain
            for target in item.targets
            if (chain := path_between(graph.edges, target, item.module))
        ]
        why = f"closes {' -> '.join([item.module, *closes[0]])}" if closes else "no cycle"
        print(f"  {item.path}:{item.line}: {item.text.splitlines()[0]}")
        print(f"      reason: {item.reason or '(none)'}  [{why}]")
    print(f"type-only imports (under TYPE_CHECKING, never run): {len(graph.type_only)}")
    for item in graph.type_only:
        closing = [t for t in item.targets if path_between(graph.edges, t, item.module)]
        print(f"  {item.path}:{item.line}: {item.text.splitlines()[0]}", end="")
        print(f"  [would close a cycle through {closing[0]}]" if closing else "")


if __name__ == "__main__":
    _report()
