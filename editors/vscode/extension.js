// VS Code client for the hensu language server (`hensuc lsp`, LSP over stdio).
// Plain CommonJS, no build step. The grammar and language configuration work without it;
// this file only starts the server when an .hwf document is opened.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

/** @type {LanguageClient | undefined} */
let client;

function serverOptions() {
  const cfg = vscode.workspace.getConfiguration('hensu');
  const command = cfg.get('server.path') || 'hensuc';
  const args = cfg.get('server.args') || ['lsp'];
  const run = { command, args, transport: TransportKind.stdio };
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

async function startClient(context, outputChannel) {
  const cfg = vscode.workspace.getConfiguration('hensu');
  if (cfg.get('server.enabled') === false) return;
  client = new LanguageClient(
    'hensu',
    'Hensu Language Server',
    serverOptions(),
    clientOptions(outputChannel)
  );
  try {
    await client.start();
  } catch (err) {
    const path = cfg.get('server.path') || 'hensuc';
    outputChannel.appendLine(`failed to start '${path} lsp': ${err && err.message ? err.message : err}`);
    vscode.window.showWarningMessage(
      `Hensu: could not start the language server ('${path} lsp'). ` +
        'Set "hensu.server.path" to the hensuc executable. Highlighting still works.'
    );
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

module.exports = { activate, deactivate };
