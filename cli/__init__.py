"""Front doors of mabos: the click CLI (:mod:`cli.commands`), the tool registry behind the CLI, the Python API
and the MCP server (:mod:`cli.tools`), the local web console (:mod:`cli.ui`) and the demo."""
