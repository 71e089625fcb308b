;; nvim-treesitter indentation
[
  (block)
  (value_arguments)
] @indent.begin

[
  "}"
  ")"
] @indent.branch @indent.end

[
  (raw_string)
  (block_comment)
] @indent.auto
