"""One error hierarchy for the whole toolkit.

::

    HeadpromptError                  base of every error raised on purpose
    ├── InputError (ValueError)      the user gave something unusable        -> exit 2
    │   ├── ValidationError          a model parameter: shape, sign, sum, value
    │   ├── InstanceFileError        an instance or witness file
    │   ├── SequenceError            a token sequence
    │   ├── ExactnessError           a float where an exact value is required
    │   ├── WitnessError             head/prompt parameters: shape, type, range
    │   └── LimitError               an input too large to finish             -> exit 2
    ├── ConstructionError            the paper's construction cannot be carried out (an
    │                                assumption fails); reports turn it into exit 3
    ├── AssumptionError              an assumption the caller required does not hold
    └── InternalError (RuntimeError) a bug: two routes disagree                -> exit 4

Messages name the object (a parameter, never a command-line flag: the library knows nothing
of the CLI), what was expected, what was found and, where it helps, how to fix it.
"""

__all__ = ["HeadpromptError", "InputError", "ValidationError", "InstanceFileError",
           "SequenceError", "ExactnessError", "WitnessError", "LimitError", "ConstructionError",
           "AssumptionError", "InternalError"]


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


class WitnessError(InputError):
    """Head or prompt parameters (a witness) have the wrong shape, type or range."""


class LimitError(InputError):
    """An input is too large to finish (SPEC section 2); the message names the limit and how
    to proceed."""


class ConstructionError(HeadpromptError):
    """The paper's construction cannot be carried out on this instance (an assumption fails);
    the message says which step breaks and why."""


class AssumptionError(HeadpromptError):
    """An assumption that the caller required does not hold on the instance."""


class InternalError(HeadpromptError, RuntimeError):
    """A bug: two independent routes to the same value disagree (exit code 4 in the CLI)."""
