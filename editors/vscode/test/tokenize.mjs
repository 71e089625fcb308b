// Tokenizes text with the committed TextMate grammar using vscode-textmate + vscode-oniguruma
// (the same engine VS Code uses), and renders a compact `line: token → scopes` listing.

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const here = path.dirname(fileURLToPath(import.meta.url));
export const EXT_DIR = path.resolve(here, '..');
export const REPO_ROOT = path.resolve(EXT_DIR, '..', '..');
export const GRAMMAR_PATH = path.join(EXT_DIR, 'syntaxes', 'hwf.tmLanguage.json');
export const ROOT_SCOPE = 'source.hwf';

let grammarPromise;

/** Loads the grammar once. */
export function loadGrammar() {
  if (!grammarPromise) {
    grammarPromise = (async () => {
      const wasmPath = require.resolve('vscode-oniguruma/release/onig.wasm');
      const wasm = await readFile(wasmPath);
      await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
      const onigLib = Promise.resolve({
        createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
        createOnigString: (s) => new oniguruma.OnigString(s),
      });
      const registry = new vsctm.Registry({
        onigLib,
        loadGrammar: async (scopeName) => {
          if (scopeName !== ROOT_SCOPE) return null;
          const text = await readFile(GRAMMAR_PATH, 'utf8');
          return vsctm.parseRawGrammar(text, GRAMMAR_PATH);
        },
      });
      const grammar = await registry.loadGrammar(ROOT_SCOPE);
      if (!grammar) throw new Error(`could not load ${GRAMMAR_PATH}`);
      return grammar;
    })();
  }
  return grammarPromise;
}

/**
 * Tokenizes `text` and returns, per line, the tokens with their scopes
 * (the root scope `source.hwf` removed).
 * @returns {Promise<Array<Array<{text: string, scopes: string[]}>>>}
 */
export async function tokenize(text) {
  const grammar = await loadGrammar();
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  let ruleStack = vsctm.INITIAL;
  const out = [];
  for (const line of lines) {
    const r = grammar.tokenizeLine(line, ruleStack);
    const toks = [];
    for (const t of r.tokens) {
      const tokText = line.slice(t.startIndex, Math.min(t.endIndex, line.length));
      if (tokText.length === 0) continue;
      toks.push({ text: tokText, scopes: t.scopes.filter((s) => s !== ROOT_SCOPE) });
    }
    out.push(toks);
    ruleStack = r.ruleStack;
  }
  return out;
}

/**
 * The snapshot text: one entry per token that carries a scope besides the root, as
 * `<line>: <token> → <scope> <scope>`; whitespace-only tokens and tokens with only the root
 * scope (plain identifiers, punctuation without a scope) are left out. Tokens are quoted with
 * backticks-free JSON quoting so trailing spaces are visible.
 */
export function renderSnapshot(lines) {
  const rows = [];
  lines.forEach((toks, i) => {
    for (const t of toks) {
      if (t.scopes.length === 0) continue;
      if (/^\s+$/.test(t.text) && t.scopes.every((s) => !s.startsWith('string') && !s.startsWith('comment'))) continue;
      rows.push(`${i + 1}: ${JSON.stringify(t.text)} → ${t.scopes.join(' ')}`);
    }
  });
  return rows.join('\n') + '\n';
}

/** The scopes of the first token of `line` (1-based) whose text is exactly `text`. */
export function scopesOf(lines, lineNo, text) {
  const toks = lines[lineNo - 1] || [];
  const t = toks.find((x) => x.text === text);
  return t ? t.scopes : null;
}
