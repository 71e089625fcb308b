("(" @open ")" @close)
("{" @open "}" @close)
