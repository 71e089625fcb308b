; workflow("name"), agent("id"), node("id"), parallel("id"), … — the file outline
(call_expression
  function: (identifier) @context
  arguments: (value_arguments
    .
    (value_argument
      value: (string) @name))) @item

(function_declaration
  "fun" @context
  name: (identifier) @name) @item
