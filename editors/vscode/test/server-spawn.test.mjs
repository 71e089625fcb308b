// What the REAL vscode-languageclient spawns from extension.js's server options, run against the
// real `hensuc`: the client computes the command line and starts the process exactly as in VS
// Code (LanguageClient.createMessageTransports, the step start() takes), and the test speaks LSP
// over the transports it returns. Only the `vscode` module is faked (the client needs a few
// constructors of it); child_process.spawn is wrapped to record the command line, not replaced.
//
// Needs a built hensuc: $HENSUC, or target/debug/hensuc (`cargo build -p hensuc`).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { EXT_DIR, REPO_ROOT } from './tokenize.mjs';

const require = createRequire(import.meta.url);
const Module = require('node:module');
const childProcess = require('node:child_process');

const HENSUC = process.env.HENSUC || path.join(REPO_ROOT, 'target', 'debug', 'hensuc');

// The misspelt goto target `dnoe` is E0204 (unknown node id, did you mean `done`?).
const DOC = `workflow("spawn") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "write"
        node("write") {
            agent = "writer"
            prompt = "Write."
            onSuccess goto "dnoe"
        }
        end("done")
    }
}
`;

/** Just enough of the `vscode` API for LanguageClient's constructor and transports. */
function fakeVscode() {
  class Disposable {
    constructor(fn) { this.fn = fn; }
    dispose() { if (this.fn) this.fn(); }
    static from(...ds) { return new Disposable(() => ds.forEach((d) => d && d.dispose && d.dispose())); }
  }
  class EventEmitter {
    constructor() { this.listeners = []; this.event = (l) => { this.listeners.push(l); return new Disposable(); }; }
    fire(e) { this.listeners.forEach((l) => l(e)); }
    dispose() {}
  }
  const channel = { lines: [], append(s) { this.lines.push(s); }, appendLine(s) { this.lines.push(s + '\n'); }, show() {}, dispose() {} };
  // A namespace whose unknown members are event registrations / factories returning a Disposable.
  const inert = (known) => new Proxy(known, { get: (t, k) => (k in t ? t[k] : () => new Disposable()) });
  const vscode = new Proxy({
    version: '1.139.1',
    Disposable,
    EventEmitter,
    workspace: inert({ getConfiguration: () => ({ get: () => undefined }), workspaceFolders: undefined }),
    window: inert({ createOutputChannel: () => channel }),
    commands: inert({}),
    languages: inert({}),
    notebooks: inert({}),
    env: { language: 'en' },
    Uri: { parse: (s) => ({ toString: () => s, fsPath: s }), file: (p) => ({ toString: () => `file://${p}`, fsPath: p }) },
  }, {
    // Anything else the client touches: an inert class (or enum namespace), not undefined.
    get: (target, key) => (key in target ? target[key] : class {}),
  });
  return { channel, vscode };
}

function loadExtension() {
  const { vscode, channel } = fakeVscode();
  for (const id of Object.keys(require.cache)) {
    if (id.includes(`${path.sep}vscode-languageclient${path.sep}`) || id === path.join(EXT_DIR, 'extension.js')) delete require.cache[id];
  }
  const orig = Module._load;
  Module._load = function (request, ...rest) {
    return request === 'vscode' ? vscode : orig.call(this, request, ...rest);
  };
  try {
    return { ext: require(path.join(EXT_DIR, 'extension.js')), lc: require('vscode-languageclient/node'), channel };
  } finally {
    Module._load = orig;
  }
}

/** Wraps child_process.spawn (the real one still runs) and records each command line. */
function recordSpawns() {
  const spawned = [];
  const orig = childProcess.spawn;
  childProcess.spawn = function (command, args, options) {
    const proc = orig.call(this, command, args, options);
    spawned.push({ command, args: [...args], proc });
    return proc;
  };
  return { spawned, restore: () => { childProcess.spawn = orig; } };
}

function projectWithError() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hwf-spawn-'));
  fs.mkdirSync(path.join(dir, 'workflows'));
  const file = path.join(dir, 'workflows', 'spawn.hwf');
  fs.writeFileSync(file, DOC);
  return `file://${file}`;
}

/** initialize → didOpen a document with an error → its diagnostics → shutdown/exit. */
async function session(transports, uri) {
  const rpc = require('vscode-jsonrpc/node');
  const conn = rpc.createMessageConnection(transports.reader, transports.writer);
  const diagnostics = new Promise((resolve) => {
    conn.onNotification('textDocument/publishDiagnostics', (p) => { if (p.uri === uri) resolve(p.diagnostics); });
  });
  conn.listen();
  const init = await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  await conn.sendNotification('initialized', {});
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'hwf', version: 1, text: DOC },
  });
  const diags = await diagnostics;
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  return { init, diags, conn };
}

function exitOf(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) resolve(proc.exitCode);
    else proc.on('exit', (code) => resolve(code));
  });
}

async function spawnAndTalk(makeClient) {
  assert.ok(fs.existsSync(HENSUC), `no hensuc at ${HENSUC}: run \`cargo build -p hensuc\` or set HENSUC`);
  const { ext, lc, channel } = loadExtension();
  const { spawned, restore } = recordSpawns();
  let transports;
  try {
    transports = await makeClient(ext, lc, channel).createMessageTransports('utf-8');
  } finally {
    restore();
  }
  assert.equal(spawned.length, 1);
  const [{ command, args, proc }] = spawned;
  // A server that dies (e.g. on an argument it rejects) must fail the test, not leave it waiting.
  const died = exitOf(proc).then((code) => {
    throw new Error(`\`${command} ${args.join(' ')}\` exited with ${code} before the session ended: ${channel.lines.join('')}`);
  });
  const { init, diags, conn } = await Promise.race([session(transports, projectWithError()), died]);
  died.catch(() => {});
  const code = await exitOf(proc);
  conn.dispose();
  return { command, args, init, diags, code, stderr: channel.lines.join('') };
}

function assertServed({ init, diags, code, stderr }) {
  assert.equal(init.capabilities.textDocumentSync, 2, 'incremental sync');
  assert.equal(diags.length, 1, JSON.stringify(diags));
  assert.equal(diags[0].code, 'E0204');
  assert.match(diags[0].message, /did you mean `done`\?/);
  assert.deepEqual(diags[0].range, { start: { line: 9, character: 27 }, end: { line: 9, character: 33 } });
  assert.equal(code, 0, `hensuc exited with ${code}; stderr: ${stderr}`);
}

test("the extension's server options: the real client spawns `hensuc lsp`, which serves", async () => {
  const r = await spawnAndTalk((ext, _lc, channel) => ext.createClient(HENSUC, ['lsp'], channel));
  assert.equal(r.command, HENSUC);
  assert.deepEqual(r.args, ['lsp']);
  assertServed(r);
});

test('a client that appends --stdio (TransportKind.stdio) gets a working server too', async () => {
  const r = await spawnAndTalk((_ext, lc, channel) => new lc.LanguageClient(
    'hensu-stdio', 'stdio transport',
    { command: HENSUC, args: ['lsp'], transport: lc.TransportKind.stdio },
    { documentSelector: [{ language: 'hwf' }], outputChannel: channel },
  ));
  assert.deepEqual(r.args, ['lsp', '--stdio']);
  assertServed(r);
});
