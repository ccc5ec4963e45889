"""The server: the launcher run.sh starts (launch), importing heavy libraries before a page runs
(warmup), the memory ceiling and allocator settings (server_memory), each page's largest input
(caps), the cached wrappers every number passes through on its way from ln_core (compute) and
the refusal of results that overflow (overflow).

May import ln_core, teaching, ui.entry and ui.export (a cached bundle); never ui.session,
ui.lesson nor pages/.
"""
