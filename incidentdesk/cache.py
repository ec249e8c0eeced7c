"""Django's Redis cache, with one client per server for the whole process.

Django builds a new `redis.Redis` for every cache operation (about 0.25 ms
of CPU: a table of some 170 response callbacks), and a cache object is
private to a thread and async context, with its own connection pool. Each
chat answer runs in a fresh context on a worker thread, so each opened a new
Redis connection too (measured: 0.8 HELLO handshakes per answer at 50
websocket clients). A client is thread-safe and its pool hands out one
connection per concurrent caller, so one client per server is kept instead.

The cache objects also share Django's `RedisCacheClient`: building one reads
redis's package metadata from disk (redis 8's `DriverInfo`, ~0.4 ms of CPU),
and a fresh one was built in every answer's and every socket's context.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property

_CLIENTS: dict[str, Any] = {}  # server URL -> redis.Redis, shared by every cache object
# (servers, options) -> the RedisCacheClient every cache object of that configuration uses
_CACHE_CLIENTS: dict[str, RedisCacheClient] = {}


class ReusedClientRedisCacheClient(RedisCacheClient):
    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        django_client: Any = self  # the stubs leave out the helpers used here
        server = django_client._servers[django_client._get_connection_pool_index(write)]
        client = _CLIENTS.get(server)
        if client is None:
            pool = django_client._get_connection_pool(write)
            client = _CLIENTS.setdefault(server, django_client._client(connection_pool=pool))
        return client


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient

    @cached_property
    def _cache(self) -> RedisCacheClient:
        """The process's client for this configuration, built once (see above)."""
        django_cache: Any = self  # the stubs leave out RedisCache's private attributes
        servers, options = django_cache._servers, django_cache._options
        key = repr((servers, options))
        client = _CACHE_CLIENTS.get(key)
        if client is None:
            client = _CACHE_CLIENTS.setdefault(key, self._class(servers, **options))
        return client

    def client(self) -> Any:
        """The shared `redis.Redis`, for commands the cache API has no word for
        (hashes); its keys go through `make_key`."""
        return self._cache.get_client(write=True)

    def pipeline(self) -> Any:
        """A Redis pipeline without MULTI: several commands, one round trip.

        Keys go through `make_key`; integers are stored as plain numbers,
        the way `add`, `incr` and `get` of this cache store and read them.
        """
        return self.client().pipeline(transaction=False)

    def keys_matching(self, pattern: str) -> list[str]:
        """The keys matching `pattern` (a glob over keys as this cache's callers name
        them, without the prefix), read with SCAN: KEYS would block Redis for everyone."""
        prefix = self.make_key("")
        client = self._cache.get_client()
        return [key.decode()[len(prefix) :] for key in client.scan_iter(match=prefix + pattern)]
