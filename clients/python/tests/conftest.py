"""A real `hensuc serve` for the tests: SQLite in a temp dir, stub agents, JWT tenants.

HENSUC names the binary (clients/test.sh sets it). The HS256 secret is random per session and
only ever in the server's environment; the server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import pytest

from hensu_client import HensuClient

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
WORKFLOWS = ("client-review", "client-quick")


@dataclass
class Server:
    url: str
    secret: str
    definitions: dict[str, dict[str, Any]]

    def token(self, tenant: str, *, sub: str = "client-tests") -> str:
        claims = {"sub": sub, "tenant_id": tenant, "exp": int(time.time()) + 3600}
        return jwt.encode(claims, self.secret, algorithm="HS256")

    def client(self, tenant: str = "acme") -> HensuClient:
        return HensuClient(self.url, self.token(tenant))

    def new_tenant(self) -> HensuClient:
        """A client of a fresh tenant with the test workflows pushed (isolated lists)."""
        client = self.client(f"t-{uuid.uuid4().hex[:12]}")
        for definition in self.definitions.values():
            client.push_workflow(definition)
        return client


def hensuc() -> str:
    binary = os.environ.get("HENSUC")
    if not binary:
        pytest.exit("set HENSUC to a hensuc binary (clients/test.sh does)", returncode=2)
    return str(Path(binary).resolve())


def build(binary: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in WORKFLOWS:
        text = subprocess.run(
            [binary, "build", str(FIXTURES / "workflows" / f"{name}.hwf"), "-d", str(FIXTURES), "-o", "-"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        definition = json.loads(text)
        out[definition["id"]] = definition
    return out


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    binary = hensuc()
    tmp = tmp_path_factory.mktemp("hensu")
    secret = secrets.token_urlsafe(48)
    log = open(tmp / "serve.log", "w+")
    proc = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--stub", "--store", str(tmp / "state.db"), "-d", str(tmp)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HENSU_JWT_SECRET": secret},
    )
    try:
        url = None
        for _ in range(200):
            text = (tmp / "serve.log").read_text()
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", text)
            if found:
                url = found.group(1)
                break
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        if url is None:
            pytest.fail("hensuc serve did not start:\n" + (tmp / "serve.log").read_text())
        definitions = build(binary)
        yield Server(url=url, secret=secret, definitions=definitions)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture()
def client(server: Server) -> Iterator[HensuClient]:
    with server.new_tenant() as client:
        yield client
