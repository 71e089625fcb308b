[
  (block)
  (value_arguments)
  (raw_string)
  (block_comment)
] @fold
