"""The connection layer's errors, apart from Temporal's and the codec's modules: the command line
catches them without importing either."""

from __future__ import annotations


class CodecKeyError(ValueError):
    """A codec key is malformed or missing; the message says which and what to set."""


class TemporalUnreachableError(ConnectionError):
    """No Temporal server answered at the configured address; the message says what to set."""


class TemporalRefusedError(TemporalUnreachableError):
    """Temporal (or the proxy in front of it) answered and refused this client: a certificate or
    an API key it doesn't take. The message names what to fix; retrying won't."""


class TemporalConfigError(TemporalUnreachableError):
    """Temporal's client configuration (TEMPORAL_* variables, a profile, a file it names) can't be
    read; the message says which."""


def undecodable(error: BaseException) -> bool:
    """The data converter's KeyError for a payload encoding it has no codec for (a sealed
    payload read without ICEPURGE_CODEC_KEYS)."""
    return isinstance(error, KeyError) and "Unknown payload encoding" in str(error)
