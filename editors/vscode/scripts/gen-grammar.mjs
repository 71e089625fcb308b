#!/usr/bin/env node
// Generates the editor grammars' word lists from grammar/keywords.toml, the one table of
// keywords and builtins:
//   editors/vscode/syntaxes/hwf.tmLanguage.json          (TextMate grammar, VS Code)
//   grammar/tree-sitter-hwf/queries/highlights.scm        (tree-sitter, nvim-treesitter capture names)
//   grammar/tree-sitter-hwf/queries/helix/highlights.scm  (same, Helix capture names)
//   grammar/tree-sitter-hwf/zed/languages/hwf/highlights.scm (same, Zed capture names)
//
//   node scripts/gen-grammar.mjs           write all of them
//   node scripts/gen-grammar.mjs --check   exit 1 if a committed file differs from what
//                                          keywords.toml generates (CI staleness check)
//
// Node 20, no network; the only dependency is the `smol-toml` parser (devDependency).
// HWF_KEYWORDS=/path/to/keywords.toml overrides the input (for experiments only).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const EXT_DIR = path.resolve(here, '..');
const REPO_ROOT = path.resolve(EXT_DIR, '..', '..');
const KEYWORDS = process.env.HWF_KEYWORDS || path.join(REPO_ROOT, 'grammar', 'keywords.toml');
const TM_OUT = path.join(EXT_DIR, 'syntaxes', 'hwf.tmLanguage.json');
const TS_DIR = path.join(REPO_ROOT, 'grammar', 'tree-sitter-hwf');
const HL_OUT = path.join(TS_DIR, 'queries', 'highlights.scm');
const HL_HELIX_OUT = path.join(TS_DIR, 'queries', 'helix', 'highlights.scm');
const HL_ZED_OUT = path.join(TS_DIR, 'zed', 'languages', 'hwf', 'highlights.scm');
const HL_TEMPLATE = path.join(TS_DIR, 'queries', 'highlights.scm.in');

// ------------------------------------------------------------------ keywords.toml → model

/**
 * The word lists the grammars need, read from keywords.toml.
 * @typedef {{
 *   reserved: string[],        // words of the language proper: fun, package, import, return
 *   literals: string[],        // true, false, null
 *   unsupported: string[],     // Kotlin keywords that are not part of the language (val, if, …)
 *   nodeKinds: string[],       // node, parallel, fork, join, generic, action, subWorkflow, end
 *   blocks: string[],          // workflow, state, agents, agent, graph, config, review, …
 *   functions: string[],       // writes, input, variable, listOf, mapOf, …
 *   properties: string[],      // role, model, prompt, temperature, …
 *   markers: string[],         // onSuccess, onFailure, whenScore, whenValue, start, …
 *   transitionWords: string[], // goto, revise, retry, otherwise, withFeedback
 *   comparisons: string[],     // greaterThan, lessThan, equalTo, …
 *   infixWords: string[],      // at, to, in
 *   stringFunctions: string[], // trimIndent, trimMargin
 *   removed: string[],         // upstream constructs removed from the language (planning, loop)
 *   enums: Record<string, string[]>, // VarType → [STRING, …]
 * }} Model
 */

/** @returns {Model} */
export function loadModel(text) {
  const { parse } = require('smol-toml');
  const doc = parse(text);
  return modelFromToml(doc);
}

const asList = (v) => (Array.isArray(v) ? v.map(String) : []);
const uniq = (xs) => [...new Set(xs)];

/** Maps the parsed keywords.toml onto the generator's model. */
function modelFromToml(doc) {
  const get = (...keys) => {
    let v = doc;
    for (const k of keys) {
      if (v == null || typeof v !== 'object') return undefined;
      v = v[k];
    }
    return v;
  };
  const words = (...keys) => asList(get(...keys));

  /** @type {Model} */
  const m = {
    reserved: words('kotlin', 'keywords'),
    literals: words('kotlin', 'literals'),
    unsupported: words('kotlin', 'unsupported'),
    nodeKinds: words('dsl', 'node_kinds'),
    blocks: words('dsl', 'blocks'),
    functions: words('dsl', 'functions'),
    properties: words('dsl', 'properties'),
    markers: words('dsl', 'transition_markers'),
    transitionWords: words('dsl', 'transition_words'),
    comparisons: words('dsl', 'comparisons'),
    infixWords: words('dsl', 'infix_words'),
    stringFunctions: words('dsl', 'string_functions'),
    removed: words('dsl', 'removed'),
    enums: {},
  };
  const enums = get('enums') || {};
  for (const [name, values] of Object.entries(enums)) m.enums[name] = asList(values);
  return normalize(m);
}

function normalize(m) {
  for (const k of Object.keys(m)) {
    if (Array.isArray(m[k])) m[k] = uniq(m[k]).sort(byLengthThenName);
  }
  for (const k of Object.keys(m.enums)) m.enums[k] = uniq(m.enums[k]).sort(byLengthThenName);
  const required = ['reserved', 'literals', 'nodeKinds', 'blocks', 'markers', 'transitionWords'];
  const missing = required.filter((k) => m[k].length === 0);
  if (missing.length) throw new Error(`keywords.toml: no words for ${missing.join(', ')}`);
  if (Object.keys(m.enums).length === 0) throw new Error('keywords.toml: no enums');
  return m;
}

// Longest first, so an alternation never stops at a prefix (`lessThan` vs `lessThanOrEqual`).
function byLengthThenName(a, b) {
  return b.length - a.length || (a < b ? -1 : a > b ? 1 : 0);
}

// ---------------------------------------------------------------------- TextMate grammar

const esc = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const alt = (ws) => ws.map(esc).join('|');
// Identifier boundaries that respect Unicode letters and backticks.
const B = '(?<![\\p{L}\\p{N}_`])';
const E = '(?![\\p{L}\\p{N}_`])';
const word = (ws) => `${B}(?:${alt(ws)})${E}`;

/** @param {Model} m */
export function tmGrammar(m) {
  const enumNames = Object.keys(m.enums).sort(byLengthThenName);
  const allConstants = uniq(Object.values(m.enums).flat()).sort(byLengthThenName);
  // `in` is a hard keyword in Kotlin (listed as unsupported): only `` `in` `` is the infix word.
  const infixPlain = m.infixWords.filter((w) => /^[A-Za-z_]\w*$/.test(w) && !m.unsupported.includes(w));
  const backtickWords = uniq([...m.infixWords, ...m.comparisons, ...m.transitionWords]).sort(byLengthThenName);

  return {
    $schema: 'https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json',
    name: 'Hensu Workflow',
    scopeName: 'source.hwf',
    fileTypes: ['hwf'],
    comment:
      'GENERATED by editors/vscode/scripts/gen-grammar.mjs from grammar/keywords.toml — do not edit by hand.',
    patterns: [
      { include: '#comments' },
      { include: '#annotations' },
      { include: '#preamble' },
      { include: '#fun-declaration' },
      { include: '#strings' },
      { include: '#string-functions' },
      { include: '#qualified-constants' },
      { include: '#declarations' },
      { include: '#transitions' },
      { include: '#calls' },
      { include: '#properties' },
      { include: '#constants' },
      { include: '#keywords' },
      { include: '#numbers' },
      { include: '#identifiers' },
      { include: '#operators' },
      { include: '#punctuation' },
    ],
    repository: {
      comments: {
        patterns: [{ include: '#kdoc' }, { include: '#block-comment' }, { include: '#line-comment' }],
      },
      kdoc: {
        name: 'comment.block.documentation.kdoc.hwf',
        begin: '/\\*\\*(?!/)',
        beginCaptures: { 0: { name: 'punctuation.definition.comment.begin.hwf' } },
        end: '\\*/',
        endCaptures: { 0: { name: 'punctuation.definition.comment.end.hwf' } },
        patterns: [
          { include: '#block-comment' },
          {
            match: '(?<=^|\\s|\\*)(@[A-Za-z]+)(?:\\s+([\\p{L}_][\\p{L}\\p{N}_.]*))?',
            captures: {
              1: { name: 'keyword.other.documentation.tag.kdoc.hwf' },
              2: { name: 'variable.parameter.kdoc.hwf' },
            },
          },
          { match: '`[^`\\r\\n]+`', name: 'markup.inline.raw.kdoc.hwf' },
        ],
      },
      'block-comment': {
        name: 'comment.block.hwf',
        begin: '/\\*',
        beginCaptures: { 0: { name: 'punctuation.definition.comment.begin.hwf' } },
        end: '\\*/',
        endCaptures: { 0: { name: 'punctuation.definition.comment.end.hwf' } },
        patterns: [{ include: '#block-comment' }],
      },
      'line-comment': {
        match: '(//).*$',
        name: 'comment.line.double-slash.hwf',
        captures: { 1: { name: 'punctuation.definition.comment.hwf' } },
      },

      annotations: {
        // `@Suppress("W0307")` before a statement (the arguments are ordinary tokens)
        match: '(@)([\\p{L}_][\\p{L}\\p{N}_]*)',
        captures: {
          1: { name: 'punctuation.definition.annotation.hwf' },
          2: { name: 'storage.type.annotation.hwf' },
        },
      },

      preamble: {
        patterns: [
          {
            match: `^\\s*(package|import)${E}\\s*([\\p{L}_][\\p{L}\\p{N}_]*(?:\\s*\\.\\s*[\\p{L}_][\\p{L}\\p{N}_]*)*)(?:\\s*(\\.)\\s*(\\*))?`,
            captures: {
              1: { name: 'keyword.other.import.hwf' },
              2: { name: 'entity.name.namespace.hwf' },
              3: { name: 'punctuation.accessor.hwf' },
              4: { name: 'keyword.operator.wildcard.hwf' },
            },
          },
        ],
      },

      'fun-declaration': {
        match: `${B}(fun)\\s+([\\p{L}_][\\p{L}\\p{N}_]*|\`[^\`\\r\\n]+\`)\\s*(?=\\()`,
        captures: {
          1: { name: 'storage.type.function.hwf' },
          2: { name: 'entity.name.function.declaration.hwf' },
        },
      },

      strings: {
        patterns: [{ include: '#raw-string' }, { include: '#string' }],
      },
      'raw-string': {
        name: 'string.quoted.triple.hwf',
        begin: '"""',
        beginCaptures: { 0: { name: 'punctuation.definition.string.begin.hwf' } },
        // Kotlin: in a run of more than three quotes the last three close the string.
        end: '"""(?!")',
        endCaptures: { 0: { name: 'punctuation.definition.string.end.hwf' } },
        patterns: [{ include: '#placeholder' }, { include: '#template' }],
      },
      string: {
        name: 'string.quoted.double.hwf',
        begin: '"',
        beginCaptures: { 0: { name: 'punctuation.definition.string.begin.hwf' } },
        // A regular string cannot span lines: an unterminated one ends at the line end.
        end: '(")|$',
        endCaptures: { 1: { name: 'punctuation.definition.string.end.hwf' } },
        patterns: [
          { match: '\\\\(?:[tbnr\'"\\\\$]|u[0-9A-Fa-f]{4})', name: 'constant.character.escape.hwf' },
          { match: '\\\\.?', name: 'invalid.illegal.escape.hwf' },
          { include: '#placeholder' },
          { include: '#template' },
        ],
      },
      placeholder: {
        // Same pattern as the runtime's template resolver: {name}
        match: '(\\{)([A-Za-z_][A-Za-z0-9_]*)(\\})',
        name: 'meta.placeholder.hwf',
        captures: {
          1: { name: 'punctuation.definition.placeholder.begin.hwf' },
          2: { name: 'variable.other.placeholder.hwf' },
          3: { name: 'punctuation.definition.placeholder.end.hwf' },
        },
      },
      template: {
        // `$name` and `${` are Kotlin templates, rejected by hensu (prompts use {name});
        // a `$` followed by anything else is literal (`"^[\\s\\S]+$"`).
        match: '\\$(?:\\{|[\\p{L}_][\\p{L}\\p{N}_]*)',
        name: 'invalid.illegal.template.hwf',
      },

      'string-functions': {
        match: `(\\.)\\s*(${alt(m.stringFunctions)})${E}`,
        captures: {
          1: { name: 'punctuation.accessor.hwf' },
          2: { name: 'support.function.builtin.string.hwf' },
        },
      },

      'qualified-constants': {
        patterns: [
          ...enumNames.map((name) => ({
            match: `${B}(${esc(name)})\\s*(\\.)\\s*(?:(${alt(m.enums[name])})|([\\p{L}_][\\p{L}\\p{N}_]*))${E}`,
            captures: {
              1: { name: 'support.class.enum.hwf' },
              2: { name: 'punctuation.accessor.hwf' },
              3: { name: 'support.constant.enum.hwf' },
              4: { name: 'constant.other.enum.unknown.hwf' },
            },
          })),
          {
            // Any other qualified name: `io.hensu.LogLevel.WARN`, `a.b`
            match: `${B}([\\p{L}_][\\p{L}\\p{N}_]*)(?=\\s*\\.\\s*[\\p{L}_])`,
            captures: { 1: { name: 'entity.name.namespace.hwf' } },
          },
        ],
      },

      declarations: {
        patterns: [
          ...(m.removed.length
            ? [{ match: `${word(m.removed)}(?=\\s*[({])`, name: 'invalid.deprecated.removed.hwf' }]
            : []),
          {
            // node kinds: node("id") { … }, end("id", ExitStatus.X)
            match: `${word(m.nodeKinds)}(?=\\s*[({])`,
            name: 'keyword.other.node.hwf',
          },
          {
            // builder blocks: workflow("x") { … }, state { … }, agent("id") { … }
            match: `${word(m.blocks)}(?=\\s*[({])`,
            name: 'support.function.builder.hwf',
          },
        ],
      },

      transitions: {
        patterns: [
          {
            match: word(m.markers),
            name: 'keyword.control.transition.marker.hwf',
          },
          {
            match: word(m.transitionWords),
            name: 'keyword.control.transition.hwf',
          },
          ...(m.comparisons.length
            ? [{ match: word(m.comparisons), name: 'keyword.operator.comparison.hwf' }]
            : []),
          ...(infixPlain.length
            ? [{ match: `${word(infixPlain)}(?!\\s*[=(])`, name: 'keyword.operator.word.hwf' }]
            : []),
          {
            // `` `in` `` and any other backticked infix word
            match: `\`(?:${alt(backtickWords)})\``,
            name: 'keyword.operator.word.hwf',
          },
        ],
      },

      calls: {
        patterns: [
          ...(m.functions.length
            ? [{ match: `${word(m.functions)}(?=\\s*\\()`, name: 'support.function.hwf' }]
            : []),
          {
            match: `${B}([\\p{L}_][\\p{L}\\p{N}_]*)(?=\\s*\\()`,
            captures: { 1: { name: 'entity.name.function.call.hwf' } },
          },
        ],
      },

      properties: {
        patterns: [
          {
            // `role = "Writer"` (also named arguments)
            match: `${B}([\\p{L}_][\\p{L}\\p{N}_]*)(?=\\s*=(?!=))`,
            captures: { 1: { name: 'variable.other.property.hwf' } },
          },
        ],
      },

      constants: {
        patterns: [
          {
            // bare enum constants where the type is known: variable("x", STRING)
            match: word(allConstants),
            name: 'support.constant.enum.hwf',
          },
        ],
      },

      keywords: {
        patterns: [
          { match: `${B}(?:true|false)${E}`, name: 'constant.language.boolean.hwf' },
          { match: `${B}null${E}`, name: 'constant.language.null.hwf' },
          { match: `${B}return${E}`, name: 'keyword.control.return.hwf' },
          ...(m.reserved.length ? [{ match: word(m.reserved), name: 'keyword.other.hwf' }] : []),
          ...(m.unsupported.length
            ? [{ match: word(m.unsupported), name: 'invalid.deprecated.unsupported.hwf' }]
            : []),
        ],
      },

      numbers: {
        patterns: [
          {
            match: `${B}(?:[0-9][0-9_]*\\.[0-9][0-9_]*(?:[eE][+-]?[0-9][0-9_]*)?|[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*)[fF]?${E}`,
            name: 'constant.numeric.float.hwf',
          },
          { match: `${B}0[xX][0-9A-Fa-f][0-9A-Fa-f_]*L?${E}`, name: 'constant.numeric.integer.hexadecimal.hwf' },
          { match: `${B}0[bB][01][01_]*L?${E}`, name: 'constant.numeric.integer.binary.hwf' },
          { match: `${B}[0-9][0-9_]*L${E}`, name: 'constant.numeric.integer.long.hwf' },
          { match: `${B}[0-9][0-9_]*${E}`, name: 'constant.numeric.integer.decimal.hwf' },
        ],
      },

      identifiers: {
        patterns: [{ match: '`[^`\\r\\n]+`', name: 'variable.other.backtick.hwf' }],
      },

      operators: {
        patterns: [
          { match: '\\.\\.', name: 'keyword.operator.range.hwf' },
          { match: '=(?!=)', name: 'keyword.operator.assignment.hwf' },
          { match: '[+\\-]', name: 'keyword.operator.arithmetic.hwf' },
          { match: '->', name: 'invalid.illegal.arrow.hwf' },
        ],
      },

      punctuation: {
        patterns: [
          { match: ';', name: 'punctuation.terminator.statement.hwf' },
          { match: ',', name: 'punctuation.separator.comma.hwf' },
          { match: '\\.', name: 'punctuation.accessor.hwf' },
          { match: '\\{', name: 'punctuation.section.block.begin.hwf' },
          { match: '\\}', name: 'punctuation.section.block.end.hwf' },
          { match: '\\(', name: 'punctuation.section.parens.begin.hwf' },
          { match: '\\)', name: 'punctuation.section.parens.end.hwf' },
          { match: ':', name: 'punctuation.separator.colon.hwf' },
        ],
      },
    },
  };
}

// ------------------------------------------------------------------ tree-sitter highlights

const scmList = (ws) => ws.map((w) => JSON.stringify(w)).join(' ');

/** @param {Model} m */
export function highlights(m) {
  const template = readFileSync(HL_TEMPLATE, 'utf8');
  const enumNames = Object.keys(m.enums).sort();
  const allConstants = uniq(Object.values(m.enums).flat()).sort();
  const backtickWords = uniq([...m.infixWords, ...m.comparisons, ...m.transitionWords])
    .sort()
    .map((w) => `\`${w}\``);
  const infixPlain = m.infixWords.filter((w) => !m.unsupported.includes(w));
  const vars = {
    NODE_KINDS: scmList([...m.nodeKinds].sort()),
    BLOCKS: scmList([...m.blocks].sort()),
    FUNCTIONS: scmList([...m.functions].sort()),
    PROPERTIES: scmList([...m.properties].sort()),
    MARKERS: scmList([...m.markers].sort()),
    TRANSITION_WORDS: scmList([...m.transitionWords].sort()),
    COMPARISONS: scmList([...m.comparisons].sort()),
    INFIX_WORDS: scmList(uniq([...infixPlain, ...backtickWords]).sort()),
    STRING_FUNCTIONS: scmList([...m.stringFunctions].sort()),
    ENUM_TYPES: scmList(enumNames),
    ENUM_CONSTANTS: scmList(allConstants),
    UNSUPPORTED: scmList([...m.unsupported].sort()),
    REMOVED: scmList([...m.removed].sort()),
  };
  let out = template.replace(/@@([A-Z_]+)@@/g, (all, name) => {
    if (!(name in vars)) throw new Error(`highlights.scm.in: unknown variable ${all}`);
    return vars[name] || '"__none__"';
  });
  const header =
    ';; GENERATED by editors/vscode/scripts/gen-grammar.mjs from grammar/keywords.toml and\n' +
    ';; queries/highlights.scm.in — edit those, then run `node editors/vscode/scripts/gen-grammar.mjs`.\n\n';
  return header + out;
}

// Capture names differ between editors: the template uses nvim-treesitter's; these tables
// rename them for Helix (its theme scopes) and Zed (its syntax theme keys).
const HELIX_NAMES = {
  'comment.documentation': 'comment.block.documentation',
  'string.escape': 'constant.character.escape',
  'string.special': 'string.special',
  number: 'constant.numeric.integer',
  'number.float': 'constant.numeric.float',
  boolean: 'constant.builtin.boolean',
  'constant.builtin': 'constant.builtin',
  'keyword.function': 'keyword.function',
  'keyword.import': 'keyword.control.import',
  'keyword.return': 'keyword.control.return',
  'keyword.conditional': 'keyword.control.conditional',
  'keyword.type': 'keyword.storage.type',
  'keyword.operator': 'keyword.operator',
  module: 'namespace',
  'character.special': 'special',
  'function.call': 'function',
  'function.method.call': 'function.method',
  property: 'variable.other.member',
  'variable.parameter': 'variable.parameter',
  attribute: 'attribute',
};
const ZED_NAMES = {
  'comment.documentation': 'comment.doc',
  number: 'number',
  'number.float': 'number',
  'constant.builtin': 'constant',
  'keyword.function': 'keyword',
  'keyword.import': 'keyword',
  'keyword.return': 'keyword',
  'keyword.conditional': 'keyword',
  'keyword.type': 'keyword',
  'keyword.operator': 'keyword',
  module: 'type',
  'character.special': 'punctuation.special',
  'function.builtin': 'function',
  'function.call': 'function',
  'function.method.call': 'function',
  'variable.parameter': 'variable',
};

function renameCaptures(text, table, editor) {
  const out = text.replace(/@([a-z][a-z.]*)/g, (all, name) => (name in table ? `@${table[name]}` : all));
  return out.replace(
    /^;; GENERATED by .*\n/,
    (line) => line + `;; Capture names renamed for ${editor}.\n`,
  );
}

// ---------------------------------------------------------------------------------- main

function main(argv) {
  const check = argv.includes('--check');
  if (!existsSync(KEYWORDS)) {
    console.error(`gen-grammar: ${path.relative(REPO_ROOT, KEYWORDS)} not found`);
    process.exit(2);
  }
  const model = loadModel(readFileSync(KEYWORDS, 'utf8'));
  const outputs = [
    [TM_OUT, JSON.stringify(tmGrammar(model), null, 2) + '\n'],
    [HL_OUT, highlights(model)],
    [HL_HELIX_OUT, renameCaptures(highlights(model), HELIX_NAMES, 'Helix')],
    [HL_ZED_OUT, renameCaptures(highlights(model), ZED_NAMES, 'Zed')],
  ];
  let stale = 0;
  for (const [file, text] of outputs) {
    const rel = path.relative(REPO_ROOT, file);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
    if (current === text) {
      if (!check) console.log(`gen-grammar: ${rel} up to date`);
      continue;
    }
    if (check) {
      console.error(`gen-grammar: ${rel} is stale — run \`node editors/vscode/scripts/gen-grammar.mjs\``);
      stale++;
    } else {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
      console.log(`gen-grammar: wrote ${rel}`);
    }
  }
  if (stale) process.exit(1);
  if (check) console.log('gen-grammar: generated grammars are up to date');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2));
}
