"""The memory every cached result may take together, in MiB: the sizes of ui.server.compute's
caches add up to it, .streamlit/config.toml gives it to Streamlit as its ceiling for all cached
data (maxCacheDataSize), and ui.server.server_memory counts it in the server's ceiling.

A module of its own so that server_memory, which the launcher imports before Streamlit's runtime
exists, need not import compute: Streamlit checks each cache's limits when it is declared, and
outside a runtime it warns once per cache ("No runtime found"), twenty lines before the server's
first one.
"""

CACHE_BUDGET_MB = 256
