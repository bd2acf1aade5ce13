"""The two expected ways a request to the toolkit fails, which the command line reports as one line.

Each module raises its own subclass (``RulesError``, ``AgentError``, ``TournamentError``, ...),
whose message names what is wrong and what is accepted; ``hearts-sim`` prints any of them as
``hearts-sim: error: <message>`` and exits with code 2 (``InputError``) or 1 (``StorageError``)
without importing the module that raised it, and anything else keeps its traceback: a bug.
"""

from __future__ import annotations


class InputError(ValueError):
    """Input that cannot be used: an unknown name, a value of the wrong type or out of range, an
    impossible combination, a damaged run. Nothing has been computed or written because of it."""


class StorageError(OSError):
    """Results that could not be written (a full disk, ...): everything saved before is kept, and
    the message says how to go on."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's time limit, ``docker stop``, ``kill``), raised by ``hearts-sim``'s
    handler: handled as Ctrl-C is (finished chunks kept, the resume command said), with exit code
    143 instead of 130."""
