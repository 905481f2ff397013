"""What the per-address limits count a client's IP address as (``address_key``), and what
the caps on rooms count it as (``rooms_key``): an IPv6 client holds a whole network, and
counted address by address it had no limit at all."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

IPV6_PREFIX = 64
"""What one IPv6 client is counted as: its /64 network. A home, a phone or a rented server gets
a whole /64 (or more), so counted address by address one attacker had 2**64 of them and every
per-address limit was none."""

IPV6_ROOMS_PREFIX = 56
"""What the caps on rooms count one IPv6 client as: its /56 network. An internet provider's
customer usually holds a /56, 256 /64s: counted by its /64, one customer kept 20 rooms in each
and filled the server's 5000 (an outside attacker's review). Connections and the other limits
keep the /64, as a provider may give the /64s of one /56 to different customers: 20 connections
from each of 256 /64s stay far below the 65536 descriptors the server is given, and the others
are rates and fair turns. Nor is there a cap on connections per /48 or so: a mobile carrier
gives each phone a /64 out of one shared network, and one flooding the connection table from
many /64s no longer locks anyone out (a newcomer to a full server takes an idle connection's
place: ``server.idlers``)."""


KEYS_KEPT = 4096
"""Addresses whose keys are kept (``lru_cache``): a request that opens a room asks its
address's key three times, and parsing it is about 1.5 us (IPv4) to 14 us (IPv6) each time.
Bounded, so many addresses only miss."""


@lru_cache(maxsize=KEYS_KEPT)
def address_key(address: str, ipv6_prefix: int = IPV6_PREFIX) -> str:
    """What the per-address limits count ``address`` as: an IPv4 address as it is (an IPv6 one
    that maps an IPv4 address too), an IPv6 address as its /64 network (``ipv6_prefix``),
    anything else (a Unix socket's empty name, say) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv4Address):
        return address
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, ipv6_prefix), strict=False))


@lru_cache(maxsize=KEYS_KEPT)
def rooms_key(address: str) -> str:
    """What the caps on rooms count ``address``, or its ``address_key``, as: as
    ``address_key`` does, but an IPv6 address by its /56 network."""
    return address_key(address.partition("/")[0], IPV6_ROOMS_PREFIX)
