// VS Code client for the hensu language server (`hensuc lsp`, LSP over stdio).
// Plain CommonJS, no build step. The grammar and language configuration work without it;
// this file only starts the server when an .hwf document is opened.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

/** @type {LanguageClient | undefined} */
let client;

function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch (_) {
    return false;
  }
}

/**
 * Finds the server executable the way spawn would: a setting with a path separator names a
 * file (`~/` is expanded, as users write it), a bare name is looked up on PATH. Returns the
 * absolute path found, or what was tried, so the warning can say where it looked: on
 * code-server and remote hosts PATH is the login shell's, which often lacks ~/.cargo/bin.
 * @returns {{ found?: string, tried: string }}
 */
function resolveServerCommand(setting, env = process.env) {
  let command = setting;
  if (command === '~' || command.startsWith('~/')) command = path.join(os.homedir(), command.slice(1));
  const exts = process.platform === 'win32' ? ['', '.exe', '.cmd'] : [''];
  if (command.includes('/') || command.includes(path.sep)) {
    const file = path.resolve(command);
    const found = exts.map((e) => file + e).find(isExecutableFile);
    return { found, tried: file };
  }
  const dirs = (env.PATH || env.Path || '').split(path.delimiter).filter(Boolean);
  for (const dir of dirs) {
    const found = exts.map((e) => path.join(dir, command + e)).find(isExecutableFile);
    if (found) return { found, tried: found };
  }
  return { tried: `'${command}' on PATH (${dirs.join(path.delimiter) || 'empty'})` };
}

function serverOptions(command, args) {
  // No `transport`: for an executable, vscode-languageclient speaks stdio anyway, and with
  // `TransportKind.stdio` it appends `--stdio` to the arguments (which `hensuc lsp` also accepts).
  const run = { command, args };
  return { run, debug: run };
}

function clientOptions(outputChannel) {
  return {
    documentSelector: [
      { scheme: 'file', language: 'hwf' },
      { scheme: 'untitled', language: 'hwf' },
      // {placeholders} in prompt files: definition, references, rename
      { scheme: 'file', language: 'markdown', pattern: '**/prompts/**/*.md' },
    ],
    synchronize: {
      // prompts/*.md, rubrics/*.md, commands.yaml and hensu.toml are inputs of a workflow
      fileEvents: vscode.workspace.createFileSystemWatcher(
        '**/{*.hwf,*.kt,prompts/**/*.md,rubrics/**/*.md,commands.yaml,hensu.toml}'
      ),
    },
    outputChannel,
  };
}

/** The client for an executable already found; start() spawns `<command> <args>`. */
function createClient(command, args, outputChannel) {
  return new LanguageClient('hensu', 'Hensu Language Server', serverOptions(command, args), clientOptions(outputChannel));
}

async function startClient(context, outputChannel) {
  const cfg = vscode.workspace.getConfiguration('hensu');
  if (cfg.get('server.enabled') === false) return;
  const setting = cfg.get('server.path') || 'hensuc';
  const args = cfg.get('server.args') || ['lsp'];
  const { found, tried } = resolveServerCommand(setting);
  if (!found) {
    outputChannel.appendLine(`hensuc not found: tried ${tried}`);
    vscode.window.showWarningMessage(
      `Hensu: the language server executable was not found (tried ${tried}). ` +
        'Set "hensu.server.path" to the absolute path of hensuc. Highlighting still works.'
    );
    return;
  }
  client = createClient(found, args, outputChannel);
  try {
    await client.start();
  } catch (err) {
    // The executable exists, so the path setting is not the problem: vscode-languageclient has
    // already reported the failure (and the server's stderr is in this channel).
    outputChannel.appendLine(`failed to start '${found} ${args.join(' ')}': ${err && err.message ? err.message : err}`);
    client = undefined;
  }
}

async function stopClient() {
  if (!client) return;
  const c = client;
  client = undefined;
  try {
    await c.stop();
  } catch (_) {
    // the server may never have started
  }
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  const outputChannel = vscode.window.createOutputChannel('Hensu');
  context.subscriptions.push(outputChannel);

  context.subscriptions.push(
    vscode.commands.registerCommand('hensu.restartServer', async () => {
      await stopClient();
      await startClient(context, outputChannel);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('hensu.server')) {
        await stopClient();
        await startClient(context, outputChannel);
      }
    })
  );

  await startClient(context, outputChannel);
}

function deactivate() {
  return stopClient();
}

module.exports = { activate, deactivate, createClient, resolveServerCommand };
