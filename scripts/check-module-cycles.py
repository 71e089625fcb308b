#!/usr/bin/env python3
"""Fail when modules of one crate depend on each other in a cycle.

ARCHITECTURE.md promises that each crate's modules depend one way. This checks it from the
sources, without building: for every `crate::…`, `super::…` and `self::…` path in a module
(in `use` items and in code), it finds the module the path names and records an edge. An edge
between two modules is attributed to the two sibling modules under their closest common parent
(`engine::kinds::fork` → `state::delta` counts as `engine` → `state`), so a cycle is reported at
the level where it can be broken. A module using its own parent or child is not a cycle (Rust's
`mod.rs` re-exports its children and children use their parent's items).

Paths through a re-export (`use crate::Thing` of a `pub use` at the crate root) count as uses
of the root, so an edge hidden behind one is not seen; name the defining module in such a use
when it matters.

Usage: scripts/check-module-cycles.py [CRATE_DIR ...]   (default: every crates/*)
Exit 1 with each cycle listed (and one edge of each hop, file:line) when there is one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
USE_RE = re.compile(r"\buse\s+((?:crate|super|self)\s*::[^;]*);", re.S)
COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING_RE = re.compile(r'r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"')


def module_files(src: Path) -> dict[tuple[str, ...], Path]:
    """Module path → file, from the layout (lib.rs/main.rs, foo.rs, foo/mod.rs)."""
    modules: dict[tuple[str, ...], Path] = {}
    for file in src.rglob("*.rs"):
        rel = file.relative_to(src).with_suffix("").parts
        if rel in (("lib",), ("main",)):
            modules[()] = file
        elif rel[0] == "bin":
            continue  # binaries are crates of their own
        elif rel[-1] == "mod":
            modules[rel[:-1]] = file
        else:
            modules[rel] = file
    return modules


def strip(text: str) -> str:
    """Comments and string contents out, newlines kept so line numbers stay right."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    return STRING_RE.sub(blank, COMMENT_RE.sub(blank, text))


def expand_use(tree: str) -> list[str]:
    """`crate::a::{b, c::{d, e}}` → [`crate::a::b`, `crate::a::c::d`, `crate::a::c::e`]."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [tree]
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return [p for part in parts if part for p in expand_use(prefix + part)]


def resolve(here: tuple[str, ...], path: str, modules) -> tuple[str, ...] | None:
    segments = [s for s in re.split(r"\s*::\s*", path) if s]
    head, rest = segments[0], segments[1:]
    if head == "crate":
        base: tuple[str, ...] = ()
    elif head == "self":
        base = here
    else:  # super, possibly repeated
        base = here[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    target = base
    for seg in rest:
        if base + (seg,) in modules or target + (seg,) in modules:
            target = target + (seg,)
        else:
            break
    return target


def sibling_edge(a: tuple[str, ...], b: tuple[str, ...]):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    if n == len(a) or n == len(b):
        return None  # ancestor and descendant
    return a[: n + 1], b[: n + 1]


def cycles_in(crate: Path) -> list[str]:
    src = crate / "src"
    if not src.is_dir():
        return []
    modules = module_files(src)
    edges: dict[tuple, dict[tuple, str]] = {}
    for here, file in modules.items():
        text = strip(file.read_text(encoding="utf-8"))
        # Inline `mod x { … }` blocks are rare here; their paths count for the file's module.
        paths = [(m.start(), p) for m in USE_RE.finditer(text) for p in expand_use(m.group(1))]
        paths += [(m.start(), m.group(0)) for m in PATH_RE.finditer(text)]
        for offset, path in paths:
            target = resolve(here, path, modules)
            pair = target is not None and sibling_edge(here, target)
            if not pair:
                continue
            line = text.count("\n", 0, offset) + 1
            edges.setdefault(pair[0], {}).setdefault(pair[1], f"{shown(file)}:{line}")
    return [describe(c, edges) for c in strongly_connected(edges)]


def shown(file: Path) -> str:
    try:
        return str(file.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(file)


def strongly_connected(edges) -> list[list[tuple]]:
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def describe(comp, edges) -> str:
    name = lambda m: "::".join(m) or "crate"  # noqa: E731
    lines = [" ↔ ".join(name(m) for m in comp)]
    members = set(comp)
    for a in comp:
        for b, where in sorted(edges.get(a, {}).items()):
            if b in members:
                lines.append(f"    {name(a)} → {name(b)}  ({where})")
    return "\n".join(lines)


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    crates = [Path(a) for a in sys.argv[1:]] or sorted((root / "crates").iterdir())
    found = 0
    for crate in crates:
        for cycle in cycles_in(crate):
            found += 1
            print(f"{crate.name}: module cycle {cycle}")
    if found:
        print(f"{found} module cycle(s); see ARCHITECTURE.md (modules depend one way)")
        return 1
    print(f"no module cycles in {len(crates)} crate(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
