;; Scopes and definitions in Helix's capture names: a definition's suffix is a Helix highlight
;; scope (`variable`, `function`), unlike nvim-treesitter's `@local.definition.var` in
;; `queries/locals.scm`. A workflow has no variables; ids are strings resolved by the compiler
;; (`hensuc lsp` provides go-to-definition for node and agent ids).

(source_file) @local.scope
(block) @local.scope

(function_declaration
  name: (identifier) @local.definition.function)

(variable_declaration
  name: (identifier) @local.definition.variable)
