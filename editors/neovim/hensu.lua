-- hensu for Neovim: the `.hwf` filetype and the `hensuc lsp` language server.
-- Works on Neovim 0.7 (Debian 12) through current releases; see editors/README.md, *Neovim*.
-- Use: `dofile('/path/to/hensu/editors/neovim/hensu.lua')` in init.lua, or copy it to
-- `~/.config/nvim/plugin/hensu.lua`. `hensuc` must be on PATH (or set vim.g.hensuc_cmd).

-- The filetype. On 0.7, `vim.filetype.add` alone is ignored (filetype.lua is opt-in there),
-- so the classic autocommand comes first; it is harmless on later versions.
vim.cmd('autocmd BufRead,BufNewFile *.hwf setfiletype hwf')
if vim.filetype and vim.filetype.add then
  vim.filetype.add({ extension = { hwf = 'hwf' } })
end

local cmd = vim.g.hensuc_cmd or { 'hensuc', 'lsp' }

-- The project root: the nearest directory holding hensu.toml, workflows/ or .git.
local function root_of(file)
  local markers = { 'hensu.toml', 'workflows', '.git' }
  if vim.fs and vim.fs.find then -- 0.8+
    local found = vim.fs.find(markers, { upward = true, path = vim.fs.dirname(file) })[1]
    if found then
      return vim.fs.dirname(found)
    end
  end
  return vim.fn.getcwd()
end

if vim.lsp.config and vim.lsp.enable then -- 0.11+
  vim.lsp.config('hensuc', {
    cmd = cmd,
    filetypes = { 'hwf' },
    root_markers = { 'hensu.toml', 'workflows', '.git' },
  })
  vim.lsp.enable('hensuc')
  return
end

vim.api.nvim_create_autocmd('FileType', {
  pattern = 'hwf',
  callback = function(args)
    local config = {
      name = 'hensuc',
      cmd = cmd,
      root_dir = root_of(vim.api.nvim_buf_get_name(args.buf)),
    }
    if vim.lsp.start then -- 0.8+: reuses a running client for the same root
      vim.lsp.start(config, { bufnr = args.buf })
    else -- 0.7
      local id = vim.lsp.start_client(config)
      if id then
        vim.lsp.buf_attach_client(args.buf, id)
      end
    end
  end,
})
