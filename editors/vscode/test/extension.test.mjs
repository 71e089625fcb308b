// Unit test of the LSP client wiring in extension.js, without VS Code: `vscode` is a small
// fake and `vscode-languageclient/node`'s LanguageClient is replaced by a recorder.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

import { EXT_DIR } from './tokenize.mjs';

const require = createRequire(import.meta.url);
const Module = require('node:module');

function load({ settings = {} } = {}) {
  const clients = [];
  const warnings = [];
  const commands = {};
  const configListeners = [];
  const vscode = {
    workspace: {
      getConfiguration: (section) => ({
        get: (key) => settings[`${section}.${key}`],
      }),
      createFileSystemWatcher: (glob) => ({ glob, dispose() {} }),
      onDidChangeConfiguration: (fn) => {
        configListeners.push(fn);
        return { dispose() {} };
      },
    },
    window: {
      createOutputChannel: (name) => ({ name, lines: [], appendLine(l) { this.lines.push(l); }, dispose() {} }),
      showWarningMessage: (m) => warnings.push(m),
    },
    commands: {
      registerCommand: (id, fn) => {
        commands[id] = fn;
        return { dispose() {} };
      },
    },
  };
  class FakeClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions, started: 0, stopped: 0 });
      clients.push(this);
    }
    async start() {
      this.started++;
      if (settings.failStart) throw new Error('spawn hensuc ENOENT');
    }
    async stop() {
      this.stopped++;
    }
  }
  const lc = { LanguageClient: FakeClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 } };

  const extPath = path.join(EXT_DIR, 'extension.js');
  delete require.cache[extPath];
  const orig = Module._load;
  Module._load = function (request, ...rest) {
    if (request === 'vscode') return vscode;
    if (request === 'vscode-languageclient/node') return lc;
    return orig.call(this, request, ...rest);
  };
  try {
    const ext = require(extPath);
    return { ext, clients, warnings, commands, configListeners };
  } finally {
    Module._load = orig;
  }
}

const context = () => ({ subscriptions: [] });

test('starts `hensuc lsp` over stdio for hwf documents by default', async () => {
  const { ext, clients } = load();
  await ext.activate(context());
  assert.equal(clients.length, 1);
  const c = clients[0];
  assert.equal(c.id, 'hensu');
  assert.equal(c.started, 1);
  assert.deepEqual(c.serverOptions.run, { command: 'hensuc', args: ['lsp'], transport: 0 });
  assert.deepEqual(c.serverOptions.debug, c.serverOptions.run);
  assert.deepEqual(
    c.clientOptions.documentSelector.map((s) => s.language),
    ['hwf', 'hwf'],
  );
  await ext.deactivate();
  assert.equal(c.stopped, 1);
});

test('honours hensu.server.path and hensu.server.args', async () => {
  const { ext, clients } = load({ settings: { 'hensu.server.path': '/opt/hensu/bin/hensuc', 'hensu.server.args': ['lsp', '--log=debug'] } });
  await ext.activate(context());
  assert.equal(clients[0].serverOptions.run.command, '/opt/hensu/bin/hensuc');
  assert.deepEqual(clients[0].serverOptions.run.args, ['lsp', '--log=debug']);
  await ext.deactivate();
});

test('hensu.server.enabled = false starts nothing', async () => {
  const { ext, clients } = load({ settings: { 'hensu.server.enabled': false } });
  await ext.activate(context());
  assert.equal(clients.length, 0);
  await ext.deactivate();
});

test('a server that cannot start gives one warning, not an exception', async () => {
  const { ext, clients, warnings } = load({ settings: { failStart: true } });
  await ext.activate(context());
  assert.equal(clients.length, 1);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /hensu\.server\.path/);
  await ext.deactivate();
});

test('restart command and configuration changes restart the client', async () => {
  const { ext, clients, commands, configListeners } = load();
  await ext.activate(context());
  await commands['hensu.restartServer']();
  assert.equal(clients.length, 2);
  assert.equal(clients[0].stopped, 1);
  await configListeners[0]({ affectsConfiguration: (s) => s === 'hensu.server' });
  assert.equal(clients.length, 3);
  await configListeners[0]({ affectsConfiguration: () => false });
  assert.equal(clients.length, 3);
  await ext.deactivate();
});
