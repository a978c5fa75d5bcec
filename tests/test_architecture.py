"""The shape the code keeps (``docs/architecture.md``): a game is known only in its folder,
``training/`` has no import circle, and its function-local imports guard optional
dependencies only. AST scans, so a comment or a docstring never counts."""

from __future__ import annotations

import ast
from pathlib import Path

import envs

ROOT = Path(__file__).resolve().parent.parent
# PettingZoo's versioned modules (``from envs import craits_v0``) name their game by design, and
# the package that offers them.
VERSIONED = {ROOT / "envs" / f"{spec.id}.py" for spec in envs.GAMES.values()} | {ROOT / "envs" / "__init__.py"}
# What a function may import late: packages outside the base install (extras), or slow to import.
OPTIONAL = {
    "torch",
    "ray",
    "onnx",
    "onnxruntime",
    "sb3_contrib",
    "stable_baselines3",
    "matplotlib",
    "threadpoolctl",
    "starlette",
    "uvicorn",
    "tensorboard",
    "openskill",
    "playwright",
}


def training_files() -> list[Path]:
    """The modules of ``training/``, not the examples it ships (``training/shipped``)."""
    return [
        f
        for f in sorted((ROOT / "training").rglob("*.py"))
        if ROOT / "training" / "shipped" not in f.parents or f.parent == ROOT / "training" / "shipped"
    ]


def library_files() -> list[Path]:
    """Every module of ``training/`` and of ``envs/`` outside the games' own folders."""
    game_folders = [ROOT / Path(*spec.package.split(".")) for spec in envs.GAMES.values()]
    files = training_files() + sorted((ROOT / "envs").rglob("*.py"))
    return [f for f in files if f not in VERSIONED and not any(folder in f.parents for folder in game_folders)]


def module_name(file: Path) -> str:
    parts = file.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(file: Path):
    """(imported module, the import node, whether it sits in a function) for each import."""
    tree = ast.parse(file.read_text())
    package = module_name(file) if file.name == "__init__.py" else module_name(file).rpartition(".")[0]
    local = {
        id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node, id(node) in local
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            yield base, node, id(node) in local
            for alias in node.names:
                yield f"{base}.{alias.name}", node, id(node) in local


def docstrings(tree) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def test_no_game_is_named_or_imported_outside_its_folder():
    game_packages = [spec.package for spec in envs.GAMES.values()]
    names = {name for spec in envs.GAMES.values() for name in (spec.id, *spec.aliases)}
    problems = []
    for file in library_files():
        for module, node, _ in imports(file):
            if any(module == p or module.startswith(p + ".") for p in game_packages):
                problems.append(f"{file.relative_to(ROOT)}:{node.lineno} imports {module}")
        tree = ast.parse(file.read_text())
        skip = docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                named = [n for n in names if n == node.value or n in node.value.split()]
                if named:
                    problems.append(f"{file.relative_to(ROOT)}:{node.lineno} names {named[0]!r}")
    assert not problems, "\n".join(problems)


def training_graph() -> dict[str, set[str]]:
    files = {module_name(f): f for f in training_files()}
    graph = {}
    for name, file in files.items():
        graph[name] = {m for m, _, _ in imports(file) if m in files and m != name}
    return graph


def test_training_has_no_import_circle():
    graph = training_graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name):
        state[name] = 1
        stack.append(name)
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(other) :] + [other]))
            if other not in state:
                visit(other)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def needs_optional() -> set[str]:
    """The project's modules that import an optional dependency at their top, directly or
    through another such module: importing one of them late guards that dependency."""
    files = {module_name(f): f for f in training_files()}
    top = {name: {m for m, _, late in imports(file) if not late} for name, file in files.items()}
    needing = {name for name, mods in top.items() if any(m.split(".")[0] in OPTIONAL for m in mods)}
    while True:
        more = {name for name, mods in top.items() if name not in needing and mods & needing}
        if not more:
            return needing
        needing |= more


def test_function_local_imports_guard_optional_dependencies_only():
    guarded = needs_optional()
    late = []
    for file in training_files() + sorted((ROOT / "envs").rglob("*.py")):
        for module, node, in_function in imports(file):
            if not in_function:
                continue
            top = (node.module or "") if isinstance(node, ast.ImportFrom) and not node.level else module
            if top.split(".")[0] in OPTIONAL or module in guarded or top in guarded:
                continue
            if isinstance(node, ast.ImportFrom) and module.rpartition(".")[0] in guarded:
                continue  # a name from a guarded module
            late.append(f"{file.relative_to(ROOT)}:{node.lineno} imports {module} in a function")
    assert not late, "\n".join(sorted(set(late)))
