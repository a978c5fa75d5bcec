"""The import graph of ``training/``: each module's floor (1 + the highest floor it imports;
by default at its top only, with ``--all`` every import, in functions and under
``if __name__ == "__main__":`` too), the number of floors, the longest chain and any circle.

    python benchmarks/import_graph.py            # the floors, the longest chain, circles
    python benchmarks/import_graph.py --all      # counting function-local imports too
    python benchmarks/import_graph.py --modules  # and every module with its floor and imports
"""

from __future__ import annotations

import argparse
import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules() -> dict[str, Path]:
    found = {}
    for file in sorted((ROOT / "training").rglob("*.py")):
        if ROOT / "training" / "shipped" in file.parents and file.parent != ROOT / "training" / "shipped":
            continue  # the shipped examples
        parts = file.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return found


def top_imports(name: str, file: Path, known, everywhere: bool = False) -> set[str]:
    tree = ast.parse(file.read_text())
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree) if everywhere else tree.body:  # the module's top level, or every import
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            out |= {m for m in [base, *(f"{base}.{a.name}" for a in node.names)] if m in known}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
    return out - {name}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", action="store_true", help="list every module")
    parser.add_argument("--all", action="store_true", help="count every import, in functions too")
    args = parser.parse_args(argv)
    known = modules()
    edges = {name: top_imports(name, file, known, args.all) for name, file in known.items()}

    @functools.cache
    def floor(name: str, seen: frozenset = frozenset()) -> int:
        if name in seen:
            return 0  # a circle, reported below
        return 1 + max((floor(d, seen | {name}) for d in edges[name]), default=0)

    def chain(name: str, seen: frozenset = frozenset()) -> list[str]:
        below = max(edges[name] - seen - {name}, key=floor, default=None)
        return [name] + (chain(below, seen | {name}) if below else [])

    circles = []
    for start in sorted(edges):
        stack = [(start, [start])]
        while stack:
            name, path = stack.pop()
            for other in sorted(edges[name]):
                if other == start:
                    circles.append(" -> ".join(path + [start]))
                elif other not in path:
                    stack.append((other, path + [other]))
    top = max(known, key=floor)
    print(f"{len(known)} modules on {floor(top)} floors; the longest chain: {' <- '.join(chain(top))}")
    print(f"import circles: {len(set(circles))}" + "".join(f"\n  {c}" for c in sorted(set(circles))))
    if args.modules:
        for name in sorted(known, key=lambda n: (floor(n), n)):
            print(f"{floor(name):>2} {name}: {', '.join(sorted(edges[name])) or '-'}")


if __name__ == "__main__":
    main()
