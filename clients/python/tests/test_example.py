"""The worked examples of docs/clients.md run as written against the test server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import Server

CLIENTS = Path(__file__).resolve().parents[2]
DOC = CLIENTS.parent / "docs" / "clients.md"


def test_docs_show_the_examples_verbatim() -> None:
    doc = DOC.read_text()
    for example in ("python/examples/review.py", "typescript/examples/review.ts"):
        assert (CLIENTS / example).read_text() in doc, f"docs/clients.md must show {example} as it is"


def test_python_example_runs(server: Server, tmp_path: Path) -> None:
    workflow = tmp_path / "client_review.json"
    workflow.write_text(json.dumps(server.definitions["client_review"]))
    env = {**os.environ, "HENSU_SERVER": server.url, "HENSU_TOKEN": server.token("example")}
    out = subprocess.run(
        [sys.executable, str(CLIENTS / "python" / "examples" / "review.py"), str(workflow), "docs"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert "2 execution.paused" in out
    assert out[out.index("2 execution.paused") + 1 :][:2] == ["3 execution.completed", "completed"]
    assert out[-1].endswith(" completed")
