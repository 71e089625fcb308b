-- Headless probe for editors/neovim/check.sh: waits for the language server's diagnostics on
-- the opened buffer, asks for a hover, and writes what it got to $HENSU_PROBE_OUT.
local out = {}
local function log(s) table.insert(out, s) end
vim.defer_fn(function()
  vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 100)
  log('filetype: ' .. vim.bo.filetype)
  for _, d in ipairs(vim.diagnostic.get(0)) do
    log(string.format('diagnostic %d:%d %s %s', d.lnum + 1, d.col + 1, tostring(d.code), d.message))
  end
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for i, l in ipairs(lines) do
    local c = l:find('"greeter"')
    if c and l:find('agent =') then
      local params = { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = i - 1, character = c + 1 } }
      for _, r in pairs(vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 10000) or {}) do
        if r.result and r.result.contents then
          log('hover: ' .. (r.result.contents.value or vim.inspect(r.result.contents)):gsub('\n', ' | '))
        end
      end
      break
    end
  end
  vim.fn.writefile(out, os.getenv('HENSU_PROBE_OUT'))
  vim.cmd('qa!')
end, 200)
