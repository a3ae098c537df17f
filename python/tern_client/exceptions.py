"""Exceptions, named as redis-py names them.

ConnectionError and TimeoutError are also Python's own (so ``except
OSError`` and ``except TimeoutError`` catch them), and everything is a
TernError (alias RedisError).
"""

import builtins


class TernError(Exception):
    """Base of every error tern_client raises."""


RedisError = TernError


class ConnectionError(TernError, builtins.ConnectionError):
    """The server refused, reset or closed the connection."""


class TimeoutError(TernError, builtins.TimeoutError):
    """No reply within the timeout (or no connection within it)."""


class AuthenticationError(ConnectionError):
    """AUTH / HELLO was refused on connect."""


class ServerDownError(ConnectionError):
    """The server failed recently and is marked down for a while."""


class PoolExhaustedError(ConnectionError):
    """Every pooled connection to the server is in use."""


class ResponseError(TernError):
    """The server answered with an error reply."""


class InvalidResponse(TernError):
    """Bytes that are not a reply of the protocol."""


class DataError(TernError):
    """A request the client refuses to send (bad argument type, key too long)."""


class WatchError(TernError):
    """A WATCHed key changed: the transaction was not run."""
