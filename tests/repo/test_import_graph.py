"""The import graph of mjenv/, agents/ and train/: no circle between modules, and imports only go
down the layers below (docs/layout.md).

Every import statement counts, at module level or inside a function, under ``if TYPE_CHECKING``
too; relative imports are resolved. ``from package import name`` is an import of the submodule
``package.name`` when there is one, else of the package. The implicit import of a module's parent
packages (Python runs ``mjenv/vector/__init__.py`` before ``mjenv/vector/engine/...``) is not
counted: a package init only re-exports. Imports of names built at run time
(``importlib.import_module`` with a string: the game table's env modules and backends) are not
seen; ``mjenv.games`` names them for the modules above it.
"""

from __future__ import annotations

from tests.support import ROOT

import ast
from pathlib import Path

import pytest

PACKAGES = ("mjenv", "agents", "train")

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Plain values every layer may read: tiles and notation, rule configs, the table of games,
    # action layouts, melds, output paths.
    ("foundations", ("mjenv.tiles", "mjenv.config", "mjenv.games", "mjenv.actions", "mjenv.melds",
                     "mjenv.outputs")),
    # Pure functions over count arrays, per game; the compiled engine's copies and its copy of numpy's
    # random streams (seeding: the walls, the items' draws); the package init (the scoring entry
    # point; the envs are registered by name, not imported).
    ("rules", ("mjenv.rules.*", "mjenv.vector.rules.*", "mjenv.vector.seeding", "mjenv.scoring", "mjenv")),
    # The game state machines, readable and compiled.
    ("engine", ("mjenv.engine.*", "mjenv.vector.engine.*")),
    # What a seat sees (encoders, their text form) and the replay logs of the engine's events.
    ("encoding", ("mjenv.encoding", "mjenv.vector.encoding.*", "mjenv.describe", "mjenv.replay", "mjenv.narration")),
    # A game and its options as one checked spec (rules, action layout, observer, match settings).
    ("spec", ("mjenv.spec",)),
    # The compiled batched envs: their backends play a spec, they never import the PettingZoo envs.
    ("vector", ("mjenv.vector.*",)),
    # The PettingZoo AEC and Parallel envs: thin adapters over an engine (readable or compiled).
    ("env", ("mjenv.aec", "mjenv.compiled_table", "mjenv.parallel", "mjenv.render", "mjenv.blood_battle_v0",
             "mjenv.joy_mahjong_v0")),
    # Tools over the envs that need no agent.
    ("tools", ("mjenv.demo", "mjenv.viewer", "mjenv.benchmark", "mjenv.observation_docs")),
    # Compiled batch kernels of the policies: they own their constants.
    ("kernels", ("agents.compiled.*",)),
    # The policies: the protocol, the readable baselines, the network and its checkpoints.
    ("policies", ("agents.base", "agents.features", "agents.heuristic", "agents.heuristic_items", "agents.heuristic_joy",
                  "agents.lookahead", "agents.lookahead_joy", "agents.checkpoint", "agents.neural",
                  "agents.belief", "agents.search")),
    # Policies by name: the registry imports the policies, never the reverse.
    ("registry", ("agents.registry", "agents")),
    # The evaluation wing (duplicate protocol, both arenas, statistics, compare, levels).
    ("arena", ("agents.arena.*",)),
    # What people and toolkits call: the command line, playing in the terminal, the toolkit views,
    # and the deprecated paths of moved names (mjenv.wrappers, mjenv.rllib_env).
    ("top", ("mjenv.cli", "mjenv.__main__", "mjenv.play", "mjenv.warmup", "mjenv.integrations.*",
             "mjenv.wrappers", "mjenv.rllib_env")),
    # The trainer.
    ("train", ("train.*",)),
)
"""Layers from the bottom up: a module may import modules of its own layer or of a lower one.
A pattern names a module, or with ``.*`` a package and everything in it; the longest match wins."""

NO_TORCH_BELOW = "policies"
"""mjenv never imports torch (docs/layout.md): neither does anything below the policies."""


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package init), for every module of PACKAGES."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _known(name: str) -> str | None:
    """The longest first-party module that ``name`` is or lies in; None for third-party names."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> dict[str, tuple[int, str]]:
    """First-party module -> (line, the import as written) of every import in ``module``'s file,
    and third-party top-level names -> the same under the key ``"<external> name"``."""
    path, is_package = MODULES[module]
    package = module if is_package else module.rpartition(".")[0]
    found: dict[str, tuple[int, str]] = {}

    def add(target: str, node: ast.AST) -> None:
        first = _known(target)
        key = first if first is not None else f"<external> {target.split('.')[0]}"
        if key != module:
            found.setdefault(key, (node.lineno, ast.unparse(node)))

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base, node)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def _layer(module: str) -> int | None:
    """The index in LAYERS of ``module`` (its longest matching pattern), or None."""
    best: tuple[int, int] | None = None  # (pattern length, layer)
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            stem = pattern.removesuffix(".*")
            if module == stem or (pattern.endswith(".*") and module.startswith(stem + ".")):
                if best is None or len(stem) > best[0]:
                    best = (len(stem), index)
    return None if best is None else best[1]


def _groups() -> list[set[str]]:
    """The strongly connected groups of modules (each imports every other one, directly or not)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is small enough for recursion
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w not in MODULES:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(set(group))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return groups


def _cycle_in(group: set[str]) -> list[str]:
    """A shortest import cycle through the first (sorted) module of a strongly connected ``group``."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(GRAPH[v]):
                if w == start:
                    return paths[v] + [start]
                if w in group and w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {sorted(group)}")


def _shown(path: list[str]) -> str:
    """A cycle with the line of each import: ``a (line 3: from .b import x) -> b ...``."""
    steps = [f"{a} (line {GRAPH[a][b][0]}: {GRAPH[a][b][1]})" for a, b in zip(path, path[1:])]
    return " -> ".join(steps + [path[-1]])


def test_the_graph_sees_imports_inside_functions_and_relative_ones() -> None:
    # agents.registry imports the heuristics inside a function, relative to its package.
    assert "agents.heuristic" in GRAPH["agents.registry"]
    assert "agents.heuristic_joy" in GRAPH["agents.registry"]
    # "from mjenv import games" is the module mjenv.games, "from . import __version__" the package init.
    assert "mjenv.games" in GRAPH["mjenv.vector.factory"]
    assert "mjenv" in GRAPH["mjenv.replay"]
    assert "<external> numpy" in GRAPH["mjenv.tiles"]


def test_no_module_is_left_out_of_the_layers() -> None:
    unplaced = sorted(m for m in MODULES if _layer(m) is None)
    assert not unplaced, f"modules in no layer: {unplaced}; add each to LAYERS in {Path(__file__).name}"
    unused = [p for _, patterns in LAYERS for p in patterns
              if not any(m == p.removesuffix(".*") or m.startswith(p.removesuffix("*")) for m in MODULES)]
    assert not unused, f"patterns in LAYERS that match no module: {unused}"


def test_there_is_no_import_cycle() -> None:
    groups = _groups()
    assert not groups, "import cycles, one shown per group of modules that import each other:\n" + "\n".join(
        f"{_shown(_cycle_in(group))}\n  (the group: {', '.join(sorted(group))})" for group in groups)


def test_imports_only_go_down_the_layers() -> None:
    climbs = []
    for module, imports in sorted(GRAPH.items()):
        here = _layer(module)
        for target, (line, text) in sorted(imports.items()):
            if target in MODULES and here is not None and _layer(target) is not None and _layer(target) > here:
                climbs.append(f"{module} ({LAYERS[here][0]}) line {line}: {text} -> {target} "
                              f"({LAYERS[_layer(target)][0]})")
    assert not climbs, "imports that climb a layer:\n" + "\n".join(climbs)


def test_nothing_below_the_policies_imports_torch() -> None:
    floor = [name for name, _ in LAYERS].index(NO_TORCH_BELOW)
    offenders = [f"{m} line {GRAPH[m]['<external> torch'][0]}" for m in sorted(MODULES)
                 if (_layer(m) or 0) < floor and "<external> torch" in GRAPH[m]]
    assert not offenders, f"torch imported below the policies: {offenders}"


def test_the_compiled_engine_never_imports_the_pettingzoo_envs() -> None:
    # Issue 49: the backends read the game spec; the AEC env may stand on a backend, not the reverse.
    envs = {"mjenv.aec", "mjenv.parallel", "mjenv.blood_battle_v0", "mjenv.joy_mahjong_v0"}
    found = [f"{m} -> {t}" for m in MODULES if m.startswith("mjenv.vector") for t in GRAPH[m] if t in envs]
    assert not found, found
    assert "mjenv.spec" in GRAPH["mjenv.vector.backend"] and "mjenv.spec" in GRAPH["mjenv.blood_battle_v0"]


@pytest.mark.parametrize("module, target", [("agents.registry", "agents.heuristic"),
                                            ("agents.heuristic", "agents.compiled.heuristic"),
                                            ("agents.arena.vector", "agents.arena.protocol"),
                                            ("mjenv.aec", "mjenv.describe"),
                                            ("train.rollout", "train.vector_rollout")])
def test_once_circular_pairs_import_one_way(module: str, target: str) -> None:
    # Pairs that imported each other before the layers (issue 42), now one way, downwards.
    assert target in GRAPH[module]
    assert _layer(target) <= _layer(module)
    assert module not in GRAPH[target]


DEPRECATED_MODULES = {"mjenv.wrappers", "mjenv.rllib_env", "mjenv.rules.sichuan", "mjenv.vector.rules.sichuan"}
"""Old import paths kept for one minor version with a DeprecationWarning (tests/mjenv/test_deprecations.py)."""


def test_no_module_imports_a_deprecated_path() -> None:
    """The project itself never imports an old path: a user importing any module sees no warning."""
    assert DEPRECATED_MODULES <= set(MODULES)  # each shim still exists (else this list is stale)
    found = [f"{m}:{GRAPH[m][t][0]}: {GRAPH[m][t][1]}" for m in MODULES if m not in DEPRECATED_MODULES
             for t in GRAPH[m] if t in DEPRECATED_MODULES]
    assert not found, found
