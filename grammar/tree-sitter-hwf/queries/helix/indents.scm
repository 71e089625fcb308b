[
  (block)
  (value_arguments)
] @indent

[
  "}"
  ")"
] @outdent
