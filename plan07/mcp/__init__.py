"""`plan07 mcp`: the Planner's verbs as MCP tools over stdio (the official MCP SDK, imported
only by `server`).
"""
