// Unit test of the LSP client wiring in extension.js, without VS Code: `vscode` is a small
// fake and `vscode-languageclient/node`'s LanguageClient is replaced by a recorder. What the
// real client spawns from these options is tested in server-spawn.test.mjs.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
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
      if (settings.failStart) throw new Error('Server process exited with code 2');
    }
    async stop() {
      this.stopped++;
    }
  }
  const lc = { LanguageClient: FakeClient };

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

/** A directory with an executable `hensuc` (never run: the client is a fake here). */
function fakeBinDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hwf-ext-'));
  const bin = path.join(dir, 'hensuc');
  fs.writeFileSync(bin, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return { dir, bin };
}

async function withPath(dir, fn) {
  const saved = process.env.PATH;
  process.env.PATH = dir;
  try {
    return await fn();
  } finally {
    process.env.PATH = saved;
  }
}

test('starts `hensuc lsp` found on PATH, with no transport (so no --stdio is appended)', async () => {
  const { dir, bin } = fakeBinDir();
  await withPath(dir, async () => {
    const { ext, clients, warnings } = load();
    await ext.activate(context());
    assert.equal(clients.length, 1);
    const c = clients[0];
    assert.equal(c.id, 'hensu');
    assert.equal(c.started, 1);
    assert.deepEqual(c.serverOptions.run, { command: bin, args: ['lsp'] });
    assert.deepEqual(c.serverOptions.debug, c.serverOptions.run);
    assert.deepEqual(
      c.clientOptions.documentSelector.map((s) => s.language),
      ['hwf', 'hwf', 'markdown'],
    );
    assert.deepEqual(warnings, []);
    await ext.deactivate();
    assert.equal(c.stopped, 1);
  });
});

test('honours hensu.server.path and hensu.server.args', async () => {
  const { bin } = fakeBinDir();
  const { ext, clients, warnings } = load({ settings: { 'hensu.server.path': bin, 'hensu.server.args': ['lsp', '--log=debug'] } });
  await withPath('', () => ext.activate(context()));
  assert.equal(clients[0].serverOptions.run.command, bin);
  assert.deepEqual(clients[0].serverOptions.run.args, ['lsp', '--log=debug']);
  assert.deepEqual(warnings, []);
  await ext.deactivate();
});

test('hensu.server.enabled = false starts nothing', async () => {
  const { ext, clients } = load({ settings: { 'hensu.server.enabled': false } });
  await ext.activate(context());
  assert.equal(clients.length, 0);
  await ext.deactivate();
});

test('a missing executable gives one warning naming the path tried, and no client', async () => {
  const { ext, clients, warnings } = load({ settings: { 'hensu.server.path': '/nonexistent/bin/hensuc' } });
  await ext.activate(context());
  assert.equal(clients.length, 0);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /\/nonexistent\/bin\/hensuc/);
  assert.match(warnings[0], /hensu\.server\.path/);
  await ext.deactivate();
});

test('hensuc missing from PATH: the warning names the PATH searched', async () => {
  const { ext, warnings } = load();
  await withPath('/nowhere/bin', () => ext.activate(context()));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /'hensuc' on PATH \(\/nowhere\/bin\)/);
  await ext.deactivate();
});

test('an executable that is found but fails to start does not ask to set the path', async () => {
  const { bin } = fakeBinDir();
  const { ext, clients, warnings } = load({ settings: { 'hensu.server.path': bin, failStart: true } });
  const ctx = context();
  await ext.activate(ctx);
  assert.equal(clients.length, 1);
  assert.deepEqual(warnings, []);
  const channel = ctx.subscriptions[0];
  assert.match(channel.lines.join('\n'), /failed to start .*exited with code 2/);
  await ext.deactivate();
});

test('~/ in hensu.server.path is the home directory', () => {
  const { ext } = load();
  const r = ext.resolveServerCommand('~/no-such-dir/hensuc');
  assert.equal(r.found, undefined);
  assert.equal(r.tried, path.join(os.homedir(), 'no-such-dir', 'hensuc'));
});

test('restart command and configuration changes restart the client', async () => {
  const { bin } = fakeBinDir();
  const { ext, clients, commands, configListeners } = load({ settings: { 'hensu.server.path': bin } });
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
