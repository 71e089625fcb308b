// Snapshot and assertion tests for the TextMate grammar.
//
//   node --test test/                      compare with the committed snapshots
//   UPDATE_SNAPSHOTS=1 node --test test/   rewrite them (and delete snapshots of removed files)
//
// Fixtures: every file in examples/workflows/, tests/fixtures/syntax/ok/*.hwf and
// tests/fixtures/highlight/*.hwf.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { EXT_DIR, REPO_ROOT, renderSnapshot, scopesOf, tokenize } from './tokenize.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SNAP_DIR = path.join(here, 'snapshots');
const UPDATE = process.env.UPDATE_SNAPSHOTS === '1';

const FIXTURE_DIRS = [
  { dir: 'examples/workflows', match: (f) => /\.(hwf|kt)$/.test(f) },
  { dir: 'tests/fixtures/syntax/ok', match: (f) => f.endsWith('.hwf') },
  { dir: 'tests/fixtures/highlight', match: (f) => f.endsWith('.hwf') },
];

function fixtures() {
  const out = [];
  for (const { dir, match } of FIXTURE_DIRS) {
    const abs = path.join(REPO_ROOT, dir);
    if (!existsSync(abs)) continue;
    for (const f of readdirSync(abs).sort()) {
      if (!match(f)) continue;
      out.push({ rel: `${dir}/${f}`, abs: path.join(abs, f) });
    }
  }
  return out;
}

function snapName(rel) {
  return rel.replace(/\//g, '__') + '.snap';
}

describe('generated grammar', () => {
  test('syntaxes/hwf.tmLanguage.json is up to date with grammar/keywords.toml', () => {
    execFileSync(process.execPath, [path.join(EXT_DIR, 'scripts', 'gen-grammar.mjs'), '--check'], {
      stdio: 'pipe',
    });
  });
});

describe('snapshots', () => {
  const files = fixtures();
  test('there are fixtures to tokenize', () => {
    assert.ok(files.length > 0, 'no fixture found');
  });

  mkdirSync(SNAP_DIR, { recursive: true });
  for (const { rel, abs } of files) {
    test(rel, async () => {
      const lines = await tokenize(readFileSync(abs, 'utf8'));
      const actual = `# ${rel}\n` + renderSnapshot(lines);
      const snapPath = path.join(SNAP_DIR, snapName(rel));
      if (UPDATE || !existsSync(snapPath)) {
        if (!UPDATE) assert.fail(`missing snapshot ${path.relative(EXT_DIR, snapPath)} (run with UPDATE_SNAPSHOTS=1)`);
        writeFileSync(snapPath, actual);
        return;
      }
      const expected = readFileSync(snapPath, 'utf8');
      assert.equal(actual, expected, `snapshot mismatch for ${rel} (run with UPDATE_SNAPSHOTS=1 and review the diff)`);
    });
  }

  test('no orphan snapshots', () => {
    const wanted = new Set(files.map((f) => snapName(f.rel)));
    const orphans = readdirSync(SNAP_DIR).filter((f) => f.endsWith('.snap') && !wanted.has(f));
    if (UPDATE) {
      for (const o of orphans) rmSync(path.join(SNAP_DIR, o));
      return;
    }
    assert.deepEqual(orphans, [], 'snapshots without a fixture (run with UPDATE_SNAPSHOTS=1)');
  });
});

// Tricky constructs, asserted directly so a wrong snapshot cannot be accepted by accident.
describe('tricky constructs', () => {
  const has = (scopes, prefix) => scopes && scopes.some((s) => s.startsWith(prefix));

  test('regex string with \\\\ escapes and a literal $', async () => {
    const l = await tokenize('"pattern" to "^[\\\\s\\\\S]+$"  // any non-empty content\n');
    assert.ok(has(scopesOf(l, 1, '\\\\'), 'constant.character.escape'), JSON.stringify(l[0]));
    const dollar = l[0].find((t) => t.text.includes('$'));
    assert.ok(dollar, 'no token with $');
    assert.ok(!has(dollar.scopes, 'invalid'), `$ must be literal: ${JSON.stringify(dollar)}`);
    assert.ok(has(dollar.scopes, 'string.quoted.double'));
    assert.ok(has(scopesOf(l, 1, 'to'), 'keyword'), 'to is an infix word');
    assert.ok(has(scopesOf(l, 1, '// any non-empty content'), 'comment.line.double-slash') ||
      l[0].some((t) => t.text.includes('any non-empty') && has(t.scopes, 'comment.line')));
  });

  test('templates are marked invalid, placeholders are not', async () => {
    const l = await tokenize('prompt = "Hello $name, ${x} and {topic} {not-a-placeholder}"\n');
    assert.ok(has(scopesOf(l, 1, '$name'), 'invalid.illegal'), JSON.stringify(l[0]));
    assert.ok(has(scopesOf(l, 1, '${'), 'invalid.illegal'), JSON.stringify(l[0]));
    assert.ok(has(scopesOf(l, 1, 'topic'), 'variable.other.placeholder'), JSON.stringify(l[0]));
    const notPh = l[0].find((t) => t.text.includes('not-a-placeholder'));
    assert.ok(!has(notPh.scopes, 'variable.other.placeholder'));
  });

  test('raw string with JSON inside and .trimIndent()', async () => {
    const src = [
      'prompt = """',
      '    Respond as JSON: {"facts": "..."} about {mountain_name}',
      '    "quoted" and ""double""',
      '""".trimIndent()',
      'writes("facts")',
    ].join('\n');
    const l = await tokenize(src);
    assert.ok(has(scopesOf(l, 1, '"""'), 'string.quoted.triple'));
    for (const t of l[1]) assert.ok(has(t.scopes, 'string.quoted.triple'), JSON.stringify(t));
    assert.ok(has(scopesOf(l, 2, 'mountain_name'), 'variable.other.placeholder'));
    const json = l[1].find((t) => t.text.includes('"facts"'));
    assert.ok(json && !has(json.scopes, 'variable.other.placeholder'), JSON.stringify(l[1]));
    for (const t of l[2]) assert.ok(has(t.scopes, 'string.quoted.triple'), JSON.stringify(t));
    assert.ok(has(scopesOf(l, 4, 'trimIndent'), 'support.function'), JSON.stringify(l[3]));
    assert.ok(!has(scopesOf(l, 5, 'writes'), 'string'), 'the raw string must be closed');
  });

  test('backtick in, ranges and withFeedback', async () => {
    const l = await tokenize('whenScore `in` 50.0..79.0 goto "improve" withFeedback\n');
    assert.ok(has(scopesOf(l, 1, 'whenScore'), 'keyword.control'));
    assert.ok(has(scopesOf(l, 1, '`in`'), 'keyword.operator'), JSON.stringify(l[0]));
    assert.ok(has(scopesOf(l, 1, '50.0'), 'constant.numeric.float'));
    assert.ok(has(scopesOf(l, 1, '..'), 'keyword.operator.range'));
    assert.ok(has(scopesOf(l, 1, '79.0'), 'constant.numeric.float'));
    assert.ok(has(scopesOf(l, 1, 'goto'), 'keyword.control'));
    assert.ok(has(scopesOf(l, 1, 'withFeedback'), 'keyword.control'));
  });

  test('enum constants qualified and bare', async () => {
    const l = await tokenize('input("a", VarType.STRING); variable("b", STRING)\nmodel = Models.GPT_4O\n');
    assert.ok(has(scopesOf(l, 1, 'VarType'), 'support.class'));
    assert.ok(has(scopesOf(l, 1, 'STRING'), 'support.constant'));
    const bare = l[0].filter((t) => t.text === 'STRING');
    assert.equal(bare.length, 2);
    assert.ok(has(bare[1].scopes, 'support.constant'));
    assert.ok(has(scopesOf(l, 2, 'GPT_4O'), 'support.constant'));
    assert.ok(has(scopesOf(l, 2, 'model'), 'variable.other.property'));
  });

  test('node kinds, numbers, KDoc with Unicode', async () => {
    const src = [
      '/**',
      ' * Flow: research → draft ┐ — “quotes” `code` {not code}',
      ' */',
      'fun workflow() = workflow("x") {',
      '    node("a") { timeout = 60_000L; temperature = 1e-3; maxTokens = 0xFF }',
      '    /* block /* nested */ still comment */ end("done", ExitStatus.FAILURE)',
      '}',
    ].join('\n');
    const l = await tokenize(src);
    assert.ok(has(scopesOf(l, 1, '/**'), 'comment.block.documentation'));
    for (const t of l[1]) assert.ok(has(t.scopes, 'comment.block.documentation'), JSON.stringify(t));
    assert.ok(has(scopesOf(l, 4, 'fun'), 'storage.type.function'));
    assert.ok(has(scopesOf(l, 5, 'node'), 'keyword.other.node'));
    assert.ok(has(scopesOf(l, 5, '60_000L'), 'constant.numeric.integer.long'));
    assert.ok(has(scopesOf(l, 5, '1e-3'), 'constant.numeric.float'));
    assert.ok(has(scopesOf(l, 5, '0xFF'), 'constant.numeric.integer.hexadecimal'));
    const still = l[5].find((t) => t.text.includes('still comment'));
    assert.ok(still && has(still.scopes, 'comment.block'), 'block comments nest');
    assert.ok(has(scopesOf(l, 6, 'end'), 'keyword.other.node'));
    assert.ok(has(scopesOf(l, 6, 'FAILURE'), 'support.constant'));
  });

  test('string concatenation across lines', async () => {
    const l = await tokenize('role = "Diligent engineer. " +\n    "Return JSON."\nmodel = "stub"\n');
    assert.ok(has(scopesOf(l, 1, '+'), 'keyword.operator'));
    assert.ok(l[1].some((t) => t.text.includes('Return JSON.') && has(t.scopes, 'string.quoted.double')));
    assert.ok(has(scopesOf(l, 3, 'model'), 'variable.other.property'));
  });
});
