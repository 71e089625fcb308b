/**
 * @file Tree-sitter grammar for Hensu workflow files (`.hwf`, and JVM Hensu `.kt` scripts).
 * @license MIT
 *
 * The tree has the same generic shape as the Rust parser (`crates/hensu-syntax/src/ast.rs`):
 * a file preamble (`package`, `import`), an optional `fun name() = …` wrapper, calls with
 * arguments and a trailing block, assignments, infix chains (`onFailure retry 3 otherwise "x"`),
 * string expressions (`+`, `.trimIndent()`), qualified names, literals and ranges. It does not
 * know what `node`, `onScore` or `writes` mean — that is the business of highlight queries,
 * which are generated from `grammar/keywords.toml`.
 *
 * Statements end at a newline or `;`. The newline terminator (`_semi`) comes from the external
 * scanner (`src/scanner.c`), which only emits it where a statement may end — so a newline after
 * `+`, `to`, `..` or inside parentheses never ends a statement, as in Kotlin.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

const PREC = {
  chain: 1, // infix function calls: `a to b`, `onSuccess goto "x"`
  range: 2, // `a..b`
  additive: 3, // `a + b`
  unary: 4, // `-a`
  postfix: 5, // `a.b`, `a.b()`, `f()`
};

module.exports = grammar({
  name: 'hwf',

  externals: $ => [
    $._automatic_semicolon,
    $._string_content,
    $._raw_string_content,
    $._raw_string_end,
    $.block_comment,
  ],

  extras: $ => [
    /\s/,
    $.line_comment,
    $.block_comment,
  ],

  word: $ => $._plain_identifier,

  // After a link word, an identifier may start the argument (`to listOf(…)`) or the next
  // link (`withFeedback retry 3`): the parser decides by what follows it.
  conflicts: $ => [
    [$.link],
  ],

  supertypes: $ => [
    $._statement,
    $._expression,
  ],

  rules: {
    // ---------------------------------------------------------------- file

    source_file: $ => seq(
      optional($.shebang),
      repeat($._semi),
      optional(seq(
        $._top_level_item,
        repeat(seq(repeat1($._semi), $._top_level_item)),
        repeat($._semi),
      )),
    ),

    shebang: _ => token(seq('#!', /[^\r\n]*/)),

    _top_level_item: $ => choice(
      $.package_header,
      $.import_header,
      $.function_declaration,
      $._statement,
    ),

    package_header: $ => seq('package', field('path', $.qualified_identifier)),

    import_header: $ => seq(
      'import',
      field('path', $.qualified_identifier),
      optional(field('star', $.wildcard_import)),
    ),

    wildcard_import: _ => token(seq('.', '*')),

    qualified_identifier: $ => prec.right(seq(
      $.identifier,
      repeat(seq('.', $.identifier)),
    )),

    // `fun name() = workflow(…) { … }` or `fun name() { return workflow(…) { … } }`
    function_declaration: $ => seq(
      'fun',
      field('name', $.identifier),
      '(',
      ')',
      optional(seq(':', field('type', $.qualified_identifier))),
      choice(
        seq('=', field('body', $._expression)),
        field('body', $.block),
      ),
    ),

    // ----------------------------------------------------------- statements

    _semi: $ => choice($._automatic_semicolon, ';'),

    block: $ => seq(
      '{',
      repeat($._semi),
      optional(seq(
        $._statement,
        repeat(seq(repeat1($._semi), $._statement)),
        repeat($._semi),
      )),
      '}',
    ),

    _statement: $ => choice(
      $.annotated_statement,
      $.assignment,
      $.variable_declaration,
      $.return_statement,
      $._expression,
    ),

    // `@Suppress("W0307") node("x") { … }`: an annotation, on the statement's line or on a line
    // of its own, then the statement (docs/language.md, *Suppressing a warning*). Several
    // annotations nest: `@A @B x` is `@A (@B x)`.
    annotated_statement: $ => prec.right(seq(
      field('annotation', $.annotation),
      // `fun` too, for `@Suppress(…) fun name() = workflow(…)` at the top of a file.
      field('statement', choice($._statement, $.function_declaration)),
    )),

    annotation: $ => prec.right(seq(
      field('name', $.annotation_name),
      optional(field('arguments', $.value_arguments)),
    )),

    annotation_name: _ => token(seq('@', /[\p{L}_][\p{L}\p{Nd}_]*/)),

    // `val w = workflow(…) { … }` — accepted by hensu inside a block-bodied `fun` only (the
    // binding is dropped); anywhere else the compiler reports it. Parsed everywhere here so
    // editors keep a sane tree.
    variable_declaration: $ => seq(
      choice('val', 'var'),
      field('name', $.identifier),
      optional(seq(':', field('type', $.qualified_identifier))),
      '=',
      field('value', $._expression),
    ),

    // `role = "Writer"`
    assignment: $ => seq(
      field('left', $.identifier),
      '=',
      field('right', $._expression),
    ),

    return_statement: $ => prec.right(seq('return', optional(field('value', $._expression)))),

    // ---------------------------------------------------------- expressions

    _expression: $ => choice(
      $.infix_chain,
      $._range_level,
    ),

    // `head word arg word word arg …` — Kotlin infix calls, left-associative.
    // `onRejection revise "p" withFeedback retry 3 otherwise "x"` has the head `onRejection`
    // and the links `revise "p"`, `withFeedback`, `retry 3`, `otherwise "x"`.
    infix_chain: $ => prec.left(PREC.chain, seq(
      field('head', $._range_level),
      repeat1(field('link', $.link)),
    )),

    // A bare simple name after a word always starts the next link; a call (`listOf(…)`) does not.
    // `to` always takes an argument, so a newline after it continues the statement.
    link: $ => choice(
      seq(
        field('word', alias('to', $.identifier)),
        field('argument', $._link_argument),
      ),
      seq(
        field('word', $.identifier),
        optional(field('argument', $._link_argument)),
      ),
    ),

    _link_argument: $ => choice(
      $.range_expression,
      $.additive_expression,
      $.unary_expression,
      $.navigation_expression,
      $.method_call,
      $.call_expression,
      $.parenthesized_expression,
      $._literal,
    ),

    _range_level: $ => choice(
      $.range_expression,
      $._additive_level,
    ),

    // `50.0..79.0`
    range_expression: $ => prec.left(PREC.range, seq(
      field('start', $._additive_level),
      '..',
      field('end', $._additive_level),
    )),

    _additive_level: $ => choice(
      $.additive_expression,
      $._unary_level,
    ),

    // `"a" + "b"` (a line ending in `+` continues)
    additive_expression: $ => prec.left(PREC.additive, seq(
      field('left', $._additive_level),
      field('operator', choice('+', '-')),
      field('right', $._unary_level),
    )),

    _unary_level: $ => choice(
      $.unary_expression,
      $._postfix_level,
    ),

    unary_expression: $ => prec(PREC.unary, seq(
      field('operator', choice('-', '+')),
      field('operand', $._unary_level),
    )),

    _postfix_level: $ => choice(
      $.navigation_expression,
      $.method_call,
      $.call_expression,
      $._primary,
    ),

    // `VarType.STRING`, `Models.GPT_4O`, `ExitStatus.FAILURE`
    navigation_expression: $ => prec.left(PREC.postfix, seq(
      field('receiver', $._postfix_level),
      '.',
      field('name', $.identifier),
    )),

    // `"""…""".trimIndent()`
    method_call: $ => prec(PREC.postfix, seq(
      field('receiver', $._postfix_level),
      '.',
      field('method', $.identifier),
      field('arguments', $.value_arguments),
    )),

    // `node("x") { … }`, `writes("a", "b")`, `agents { … }`
    // (after a link word, `listOf ("a")` is a call argument, not the word `listOf` + `("a")`)
    call_expression: $ => prec.dynamic(1, prec.right(PREC.postfix, seq(
      field('function', $.identifier),
      choice(
        seq(field('arguments', $.value_arguments), optional(field('block', $.block))),
        field('block', $.block),
      ),
    ))),

    value_arguments: $ => seq(
      '(',
      optional(seq(
        commaSep1($.value_argument),
        optional(','),
      )),
      ')',
    ),

    value_argument: $ => seq(
      optional(seq(field('name', $.identifier), '=')),
      field('value', $._expression),
    ),

    _primary: $ => choice(
      $.identifier,
      $._literal,
      $.parenthesized_expression,
    ),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    _literal: $ => choice(
      $.string,
      $.raw_string,
      $.integer,
      $.long,
      $.real,
      $.boolean,
      $.null,
    ),

    // -------------------------------------------------------------- literals

    boolean: _ => choice('true', 'false'),
    null: _ => 'null',

    integer: _ => token(choice(
      /[0-9][0-9_]*/,
      /0[xX][0-9a-fA-F][0-9a-fA-F_]*/,
      /0[bB][01][01_]*/,
    )),

    long: _ => token(seq(
      choice(
        /[0-9][0-9_]*/,
        /0[xX][0-9a-fA-F][0-9a-fA-F_]*/,
        /0[bB][01][01_]*/,
      ),
      'L',
    )),

    real: _ => token(choice(
      /[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?[fF]?/,
      /\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?[fF]?/,
      /[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*[fF]?/,
      /[0-9][0-9_]*[fF]/,
    )),

    // "…" with escapes and {placeholder}s
    string: $ => seq(
      '"',
      repeat(choice(
        alias($._string_content, $.string_content),
        $.escape_sequence,
        $.placeholder,
        $.template,
      )),
      token.immediate('"'),
    ),

    escape_sequence: _ => token.immediate(choice(
      /\\u[0-9a-fA-F]{4}/,
      /\\[^\r\n]/,
    )),

    // `{name}` — a prompt placeholder, resolved at run time from the workflow state
    placeholder: _ => token.immediate(prec(2, /\{[a-zA-Z_][a-zA-Z0-9_]*\}/)),

    // `$name` / `${` — a Kotlin string template; hensu rejects it (prompts use {name})
    template: _ => token.immediate(prec(2, choice(
      /\$[\p{L}_][\p{L}\p{Nd}_]*/,
      '${',
    ))),

    // """…""" — no escapes; the content may contain `"` and `""`
    raw_string: $ => seq(
      '"""',
      repeat(choice(
        alias($._raw_string_content, $.string_content),
        $.placeholder,
        $.template,
      )),
      alias($._raw_string_end, '"""'),
    ),

    // ----------------------------------------------------------- identifiers

    identifier: $ => choice(
      $._plain_identifier,
      $._backtick_identifier,
    ),

    _plain_identifier: _ => /[\p{L}_][\p{L}\p{Nd}_]*/,

    // `` `in` ``
    _backtick_identifier: _ => /`[^`\r\n]+`/,

    // -------------------------------------------------------------- comments

    line_comment: _ => token(seq('//', /[^\r\n]*/)),
  },
});

/**
 * @param {RuleOrLiteral} rule
 * @returns {SeqRule}
 */
function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}
