"""One error hierarchy for the whole toolkit.

Every error a user can cause by bad input derives from :class:`InputError`; the CLI turns it
into one line on stderr and exit code 2. Messages name the object, what was expected, what was
found and, where it helps, how to fix it.
"""

__all__ = ["HeadpromptError", "InputError", "ValidationError", "InstanceFileError",
           "SequenceError", "ExactnessError", "LimitError", "InternalError"]


class HeadpromptError(Exception):
    """Base class of every error raised on purpose by headprompt."""


class InputError(HeadpromptError, ValueError):
    """The user gave something unusable (exit code 2 in the CLI)."""


class ValidationError(InputError):
    """A model parameter has the wrong shape, sign, sum or value."""


class InstanceFileError(InputError):
    """An instance or witness file cannot be read or is malformed."""


class SequenceError(InputError):
    """A token sequence is malformed or uses a token outside the vocabulary."""


class ExactnessError(InputError):
    """A value that must be exact (rational) is not, e.g. a float reached exact mode."""


class LimitError(InputError):
    """An input too large to finish (digits, states, lengths, sample counts); the message names
    the limit and the way forward (exit code 2, decided before any large allocation)."""


class InternalError(HeadpromptError):
    """A bug: a check of the toolkit against itself failed (exit code 4 in the CLI)."""
