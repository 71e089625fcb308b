(block "}" @end) @indent
(value_arguments ")" @end) @indent
