"""Front doors of mabos: the click CLI (and, later, the tool registry and MCP server)."""
