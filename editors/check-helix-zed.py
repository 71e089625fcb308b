#!/usr/bin/env python3
"""The Helix and Zed configurations of editors/README.md, checked as far as this machine allows
(run by .ci/run):

    python3 editors/check-helix-zed.py HENSUC

Helix: the `languages.toml` of the README parses, names the `hwf` language, the grammar and the
queries the README links (its `source.path` and `queries/helix/`), and its language-server
entry (`command` + `args`, with HENSUC for `hensuc`) starts a server that answers LSP
`initialize` with diagnostics-capable capabilities and shuts down cleanly. Where `hx` is
installed, `hx --health hwf` must find the language server too; Debian 12 has no Helix package,
so CI checks without it. Zed: the dev extension (`grammar/tree-sitter-hwf/zed/`) parses, its
language's `grammar` is a grammar the extension declares, at a path of this repository, and
every query file it ships is non-empty (the queries themselves compile in
editors/check-grammars.sh). Zed has no command-line check.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAMMAR = os.path.join(ROOT, "grammar", "tree-sitter-hwf")
failures = []
passed = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    (passed if ok else failures).append(what)


def helix_config():
    readme = open(os.path.join(ROOT, "editors", "README.md"), encoding="utf-8").read()
    section = readme.split("\n## Helix\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    return tomllib.loads(block), section


def lsp_roundtrip(command):
    """initialize → initialized → shutdown → exit over stdio; returns the capabilities."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)

    def send(msg):
        body = json.dumps(msg).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def receive(want_id):
        while True:
            length = None
            while True:
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError("the server closed its output")
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(proc.stdout.read(length))
            if msg.get("id") == want_id:
                return msg

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": os.getpid(), "rootUri": "file://" + ROOT,
                         "capabilities": {}}})
        caps = receive(1)["result"]["capabilities"]
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        receive(2)
        send({"jsonrpc": "2.0", "method": "exit"})
        return caps, proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    hensuc = os.path.abspath(sys.argv[1])

    config, section = helix_config()
    languages = {lang["name"]: lang for lang in config.get("language", [])}
    hwf = languages.get("hwf", {})
    check("hwf" in languages and "hwf" in hwf.get("file-types", []),
          "helix: language hwf for *.hwf")
    grammars = {g["name"]: g for g in config.get("grammar", [])}
    source = grammars.get("hwf", {}).get("source", {}).get("path", "")
    local = source.replace("/path/to/hensu", ROOT)
    check(os.path.isfile(os.path.join(local, "src", "parser.c")),
          f"helix: grammar source {source} is this repository's tree-sitter-hwf")
    for query in re.findall(r'"\$PWD"/(queries/helix/\w+\.scm)', section):
        check(os.path.getsize(os.path.join(GRAMMAR, query)) > 0, f"helix: {query}")
    server = config.get("language-server", {}).get(hwf.get("language-servers", [""])[0], {})
    check(server.get("command") == "hensuc" and server.get("args") == ["lsp"],
          "helix: language server hensuc lsp")
    caps, code = lsp_roundtrip([hensuc] + server.get("args", []))
    check("textDocumentSync" in caps and "hoverProvider" in caps and code == 0,
          "helix: the configured server answers initialize and shuts down (exit 0)")
    hx = shutil.which("hx")
    if hx:
        with tempfile.TemporaryDirectory() as home:
            os.makedirs(f"{home}/.config/helix")
            text = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
            text = text.replace("/path/to/hensu", ROOT).replace('command = "hensuc"', f'command = "{hensuc}"')
            open(f"{home}/.config/helix/languages.toml", "w").write(text)
            env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=f"{home}/.config")
            out = subprocess.run([hx, "--health", "hwf"], env=env, capture_output=True, text=True)
            check(out.returncode == 0 and hensuc in out.stdout, "helix: hx --health hwf finds hensuc")
    else:
        print("skip hx --health hwf: no hx on this machine (Debian 12 has no Helix package)")

    zed = os.path.join(GRAMMAR, "zed")
    ext = tomllib.load(open(os.path.join(zed, "extension.toml"), "rb"))
    lang = tomllib.load(open(os.path.join(zed, "languages", "hwf", "config.toml"), "rb"))
    check(lang.get("grammar") in ext.get("grammars", {}), "zed: the language's grammar is declared")
    path = ext["grammars"].get(lang.get("grammar"), {}).get("path", "")
    check(os.path.isfile(os.path.join(ROOT, path, "src", "parser.c")),
          f"zed: grammar path {path} is in this repository")
    check("hwf" in lang.get("path_suffixes", []), "zed: *.hwf files")
    for scm in sorted(os.listdir(os.path.join(zed, "languages", "hwf"))):
        if scm.endswith(".scm"):
            check(os.path.getsize(os.path.join(zed, "languages", "hwf", scm)) > 0, f"zed: {scm}")
    print(f"{len(passed)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
