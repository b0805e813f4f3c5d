"""User-facing errors.

Every mistake a user can make (bad flag, missing file, unreachable server) raises a
:class:`BiaslabError` subclass whose message is one line saying what is wrong and how to
fix it. The CLI prints that line and exits non-zero without a traceback.
"""


class BiaslabError(Exception):
    """An error caused by input or environment, reported to the user as one line."""

    exit_code = 2


class ConfigError(BiaslabError):
    """Bad command-line value, unknown model spec, missing API key."""


class DataError(BiaslabError):
    """Missing, corrupt or malformed data file."""


class BackendError(BiaslabError):
    """A model backend cannot do what was asked (server unreachable, capability missing)."""

    exit_code = 3


class CacheError(BiaslabError):
    """The run cache database cannot be used."""


class WriteError(BiaslabError):
    """A file cannot be written: the disk is full, the file size limit is reached, the folder is not writable,
    or a part of the path is a file. The file as it was is left untouched."""


class Interrupted(BiaslabError):
    """Ctrl-C (or SIGTERM) stopped a command after it saved what it had finished; the message says what was kept
    and how to go on. Exit code 130 (128 + SIGINT), or 128 + the signal that stopped it."""

    exit_code = 130

    def __init__(self, message: str, exit_code: int = 130):
        super().__init__(message)
        self.exit_code = exit_code
