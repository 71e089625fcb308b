// End-to-end test of the hwf extension in a real VS Code: code-server (VS Code in the browser)
// with the packaged .vsix installed, driven by Debian's headless Chromium through
// playwright-core. It opens examples/ (a temp copy), misspells a goto target, and checks what a
// user sees: the E0204 squiggle and Problems entry, a hover on a node id, the quick fix.
// Screenshots go to e2e/screenshots/. Run it through run.sh (installs everything, builds the
// .vsix and hensuc, then calls this with node 24):
//
//   VSIX=… HENSUC=… CODE_SERVER_NODE=… node --test vscode.e2e.mjs

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const E2E = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(E2E, '..', '..', '..');
const SHOTS = path.join(E2E, 'screenshots');
const NODE = process.env.CODE_SERVER_NODE || process.execPath;
const CODE_SERVER = path.join(E2E, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const HENSUC = process.env.HENSUC || path.join(ROOT, 'target', 'debug', 'hensuc');
const VSIX = process.env.VSIX;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT = 30_000; // upper bound per UI step; the steps normally take well under a second

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hwf-e2e-'));
const dirs = {
  project: path.join(tmp, 'project'),
  userData: path.join(tmp, 'user-data'),
  extensions: path.join(tmp, 'extensions'),
  browserProfile: path.join(tmp, 'chromium-profile'),
  home: path.join(tmp, 'xdg'),
};
let server; // the code-server child, leader of its own process group
let browser;

// code-server's extension host leaves `hensuc lsp` children behind when only code-server is
// killed: end the whole process group it leads.
function killServerGroup() {
  if (!server || server.exitCode !== null) return;
  for (const signal of ['SIGTERM', 'SIGKILL']) {
    try {
      process.kill(-server.pid, signal);
    } catch (_) {
      return; // the group is gone
    }
  }
}
process.on('exit', killServerGroup);
after(async () => {
  if (browser) await browser.close().catch(() => {});
  killServerGroup();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function codeServerEnv() {
  // A private config/data home: code-server writes its config.yaml and state there.
  return {
    ...process.env,
    XDG_CONFIG_HOME: path.join(dirs.home, 'config'),
    XDG_DATA_HOME: path.join(dirs.home, 'data'),
    XDG_CACHE_HOME: path.join(dirs.home, 'cache'),
  };
}

function commonArgs() {
  return ['--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, '--config', path.join(tmp, 'config.yaml')];
}

function writeSettings() {
  const user = path.join(dirs.userData, 'User');
  fs.mkdirSync(user, { recursive: true });
  const settings = {
    'files.autoSave': 'off',
    'hensu.server.path': HENSUC,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'chat.disableAIFeatures': true,
    'window.restoreWindows': 'none',
    'editor.minimap.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
  };
  fs.writeFileSync(path.join(user, 'settings.json'), JSON.stringify(settings, null, 2));
}

async function startCodeServer() {
  const port = await freePort();
  server = spawn(
    NODE,
    [CODE_SERVER, ...commonArgs(), '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
      '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', dirs.project],
    { env: codeServerEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  server.stdout.on('data', (d) => { log += d; });
  server.stderr.on('data', (d) => { log += d; });
  await new Promise((resolve, reject) => {
    const onData = () => { if (log.includes('HTTP server listening')) resolve(); };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.once('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${log}`)));
  });
  return `http://127.0.0.1:${port}/`;
}

/** VS Code's go-to-line (Ctrl+G) to a 1-based line and column. */
async function goTo(page, line, column) {
  await page.keyboard.press('Control+G');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: WAIT });
  await page.keyboard.type(`${line}:${column}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: WAIT });
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, name) });
}

test('hwf in code-server: squiggle + Problems entry E0204, hover, quick fix', async () => {
  assert.ok(VSIX && fs.existsSync(VSIX), `VSIX=${VSIX} does not exist (run e2e/run.sh)`);
  assert.ok(fs.existsSync(HENSUC), `no hensuc at ${HENSUC}`);
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.cpSync(path.join(ROOT, 'examples'), dirs.project, { recursive: true });
  writeSettings();

  const install = spawnSync(NODE, [CODE_SERVER, ...commonArgs(), '--install-extension', VSIX], { env: codeServerEnv(), encoding: 'utf8' });
  assert.equal(install.status, 0, `--install-extension failed:\n${install.stdout}\n${install.stderr}`);
  assert.match(install.stdout, /hensu-hwf/);

  const url = await startCodeServer();
  browser = await chromium.launchPersistentContext(dirs.browserProfile, {
    executablePath: CHROMIUM,
    headless: true, // adds --headless; the persistent context passes the empty --user-data-dir
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
  const page = browser.pages()[0] || (await browser.newPage());
  await page.goto(url, { timeout: WAIT });
  await page.locator('.monaco-workbench').waitFor({ timeout: WAIT });
  await page.locator('.explorer-folders-view').waitFor({ timeout: WAIT });

  // Open the example through Quick Open, as a user would.
  const file = path.join(dirs.project, 'workflows', 'content-pipeline.hwf');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: WAIT });
  await page.keyboard.type('content-pipeline.hwf');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'content-pipeline.hwf' }).first().waitFor({ timeout: WAIT });
  await page.keyboard.press('Enter');
  const editor = page.locator('.editor-instance .monaco-editor').first();
  await editor.locator('.view-lines', { hasText: 'contentPipeline' }).waitFor({ timeout: WAIT });
  // The clean example has no diagnostics once the server has analysed it: wait for the
  // language status, then make sure no squiggle is there before the typo.
  await page.locator('.statusbar-item', { hasText: 'Hensu Workflow' }).first().waitFor({ timeout: WAIT });
  await shot(page, '01-opened.png');
  assert.equal(await editor.locator('.squiggly-error').count(), 0);

  // Typo in a node id target: `onApproval goto "done"` → `"donee"`.
  const gotoLine = lines.findIndex((l) => l.includes('onApproval goto "done"'));
  assert.ok(gotoLine >= 0);
  const closingQuote = lines[gotoLine].indexOf('"done"') + 5; // 0-based
  await goTo(page, gotoLine + 1, closingQuote + 1);
  await page.keyboard.type('e');
  await page.keyboard.press('Escape');
  await editor.locator('.view-line', { hasText: 'onApproval goto "donee"' }).waitFor({ timeout: WAIT });

  // The squiggle and the Problems entry with code E0204.
  await editor.locator('.squiggly-error').first().waitFor({ timeout: WAIT });
  await page.keyboard.press('Control+Shift+M');
  const problem = page.locator('.markers-panel .monaco-list-row', { hasText: 'E0204' }).first();
  await problem.waitFor({ timeout: WAIT });
  const problemText = await problem.innerText();
  assert.match(problemText, /unknown node|done/i, problemText);
  await shot(page, '02-problems-E0204.png');

  // Hover a node id (the `review` declaration): the server's hover, not just the diagnostic.
  const reviewLine = lines.findIndex((l) => l.includes('node("review")'));
  await goTo(page, reviewLine + 1, lines[reviewLine].indexOf('"review"') + 3);
  await page.keyboard.press('Control+K');
  await page.keyboard.press('Control+I');
  const hover = page.locator('.monaco-hover:visible').first();
  await hover.waitFor({ timeout: WAIT });
  await page.waitForFunction(() => /review/.test(document.querySelector('.monaco-hover')?.textContent || ''), null, { timeout: WAIT });
  const hoverText = await hover.innerText();
  assert.match(hoverText, /review/, hoverText);
  await shot(page, '03-hover-node-id.png');
  await page.keyboard.press('Escape');

  // The did-you-mean quick fix on the typo (Ctrl+.), applied from the menu.
  await goTo(page, gotoLine + 1, closingQuote);
  const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'done' }).first();
  // Ctrl+. right after a keystroke can find the code actions not computed yet ("No code actions
  // available"): ask again a few times before failing.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Control+.');
    try {
      await fix.waitFor({ timeout: attempt < 5 ? 5_000 : WAIT });
      break;
    } catch (e) {
      if (attempt >= 5) {
        await page.screenshot({ path: path.join(os.tmpdir(), 'hwf-e2e-failure.png') });
        throw e;
      }
      await page.keyboard.press('Escape');
    }
  }
  await shot(page, '04-quick-fix-menu.png');
  await fix.click();
  await editor.locator('.view-line', { hasText: 'onApproval goto "done"' }).waitFor({ timeout: WAIT });
  await editor.locator('.squiggly-error').first().waitFor({ state: 'detached', timeout: WAIT });
  await page.locator('.markers-panel .monaco-list-row', { hasText: 'E0204' }).first().waitFor({ state: 'detached', timeout: WAIT });
  await shot(page, '05-fixed.png');

  // The server started, so the extension must not have asked to set hensu.server.path.
  assert.equal(await page.locator('.notifications-toasts', { hasText: 'hensu.server.path' }).count(), 0);
});
