// External scanner for tree-sitter-hwf.
//
// Tokens:
//   AUTOMATIC_SEMICOLON  a line break that ends a statement. Only emitted where the parser
//                        could end a statement (so never after `+`, `to`, `..`, `=` or inside
//                        parentheses) and not when the next line starts with `.x` (a method-call
//                        continuation such as `"""…"""\n.trimIndent()`) or `{` (a trailing
//                        block on the next line).
//   STRING_CONTENT       text of a "…" string up to `"`, `\`, a line break, `{name}` or `$name`.
//   RAW_STRING_CONTENT   text of a """…""" string up to `"""`, `{name}` or `$name`.
//   RAW_STRING_END       the closing `"""`; in a run of more than three quotes the extra ones
//                        belong to the content in Kotlin — they are kept in this token.
//   BLOCK_COMMENT        `/* … */` and KDoc `/** … */`, nesting as in Kotlin.

#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <wctype.h>

enum TokenType {
  AUTOMATIC_SEMICOLON,
  STRING_CONTENT,
  RAW_STRING_CONTENT,
  RAW_STRING_END,
  BLOCK_COMMENT,
};

void *tree_sitter_hwf_external_scanner_create(void) { return NULL; }
void tree_sitter_hwf_external_scanner_destroy(void *payload) { (void)payload; }
unsigned tree_sitter_hwf_external_scanner_serialize(void *payload, char *buffer) {
  (void)payload;
  (void)buffer;
  return 0;
}
void tree_sitter_hwf_external_scanner_deserialize(void *payload, const char *buffer,
                                                  unsigned length) {
  (void)payload;
  (void)buffer;
  (void)length;
}

static inline void advance(TSLexer *lexer) { lexer->advance(lexer, false); }
static inline void skip(TSLexer *lexer) { lexer->advance(lexer, true); }

static inline bool is_placeholder_start(int32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool is_placeholder_char(int32_t c) {
  return is_placeholder_start(c) || (c >= '0' && c <= '9');
}

static inline bool is_template_start(int32_t c) {
  return c == '_' || c == '{' || iswalpha((wint_t)c);
}

// Content of a regular (raw == false) or raw (raw == true) string.
static bool scan_string_content(TSLexer *lexer, const bool *valid, bool raw) {
  bool has_content = false;
  for (;;) {
    if (lexer->eof(lexer)) break;
    int32_t c = lexer->lookahead;

    if (c == '"') {
      if (!raw) break;
      // A run of quotes: fewer than three are content, three or more close the string.
      lexer->mark_end(lexer);
      unsigned quotes = 0;
      while (lexer->lookahead == '"') {
        advance(lexer);
        quotes++;
      }
      if (quotes < 3) {
        has_content = true;
        lexer->mark_end(lexer);
        continue;
      }
      if (has_content) {
        // Return the content before the run; the next call returns the end delimiter.
        lexer->result_symbol = RAW_STRING_CONTENT;
        return true;
      }
      if (valid[RAW_STRING_END]) {
        lexer->mark_end(lexer);
        lexer->result_symbol = RAW_STRING_END;
        return true;
      }
      return false;
    }

    if (!raw && (c == '\\' || c == '\n' || c == '\r')) break;

    if (c == '{') {
      // `{name}` is a placeholder token of its own; any other `{` is content.
      lexer->mark_end(lexer);
      advance(lexer);
      if (is_placeholder_start(lexer->lookahead)) {
        while (is_placeholder_char(lexer->lookahead)) advance(lexer);
        if (lexer->lookahead == '}') goto stop;  // the end mark is before the `{`
      }
      has_content = true;
      lexer->mark_end(lexer);
      continue;
    }

    if (c == '$') {
      // `$name` / `${` is a (rejected) Kotlin template, a token of its own.
      lexer->mark_end(lexer);
      advance(lexer);
      if (is_template_start(lexer->lookahead)) goto stop;
      has_content = true;
      lexer->mark_end(lexer);
      continue;
    }

    advance(lexer);
    has_content = true;
    lexer->mark_end(lexer);
  }
  lexer->mark_end(lexer);

stop:
  if (!has_content) return false;
  lexer->result_symbol = raw ? RAW_STRING_CONTENT : STRING_CONTENT;
  return true;
}

// `/* … */`, nesting. Called with the lookahead on the `*` after `/`.
static bool scan_block_comment_rest(TSLexer *lexer) {
  advance(lexer);  // `*`
  unsigned depth = 1;
  while (!lexer->eof(lexer)) {
    int32_t c = lexer->lookahead;
    advance(lexer);
    if (c == '*' && lexer->lookahead == '/') {
      advance(lexer);
      if (--depth == 0) break;
    } else if (c == '/' && lexer->lookahead == '*') {
      advance(lexer);
      depth++;
    }
  }
  // An unterminated comment runs to the end of the file (the parser reports it).
  lexer->mark_end(lexer);
  lexer->result_symbol = BLOCK_COMMENT;
  return true;
}

bool tree_sitter_hwf_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid) {
  (void)payload;

  // During error recovery every symbol is valid; never start string content then.
  bool error_recovery = valid[AUTOMATIC_SEMICOLON] && valid[STRING_CONTENT];

  if (!error_recovery) {
    if (valid[RAW_STRING_CONTENT] || valid[RAW_STRING_END]) {
      return scan_string_content(lexer, valid, true);
    }
    if (valid[STRING_CONTENT]) {
      return scan_string_content(lexer, valid, false);
    }
  }

  // Horizontal whitespace is never significant.
  while (lexer->lookahead == ' ' || lexer->lookahead == '\t' || lexer->lookahead == '\f' ||
         lexer->lookahead == 0xFEFF) {
    skip(lexer);
  }

  if (valid[AUTOMATIC_SEMICOLON] && (lexer->lookahead == '\n' || lexer->lookahead == '\r')) {
    advance(lexer);
    lexer->mark_end(lexer);
    lexer->result_symbol = AUTOMATIC_SEMICOLON;
    // Look at the start of the next non-blank line: `.name` continues the expression, and `{`
    // is a trailing block on the next line (no statement starts with `{`).
    while (iswspace((wint_t)lexer->lookahead)) advance(lexer);
    if (lexer->lookahead == '{') return false;
    if (lexer->lookahead == '.') {
      advance(lexer);
      if (lexer->lookahead != '.') return false;
    }
    return true;
  }

  if (valid[BLOCK_COMMENT] && lexer->lookahead == '/') {
    advance(lexer);
    if (lexer->lookahead == '*') return scan_block_comment_rest(lexer);
    return false;
  }

  return false;
}
