"""What the nodes of a cluster share through Redis (docs/cluster.md): ownership leases,
the lobby list, the quick-match queue and the channel between nodes.

Redis holds nothing that must survive: every module here copes with Redis losing
its data (a restart without persistence) and with Redis being away for a while.
"""
