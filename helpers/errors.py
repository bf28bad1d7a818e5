"""The kit's one exception type: a message that tells the user what to do."""


class KitError(Exception):
    """A problem the user can fix; its message names the fix.

    The ``kit`` command prints the message alone (no traceback) and exits with status 1.
    """


class InputError(KitError, ValueError):
    """An argument a public function cannot use: raised before any work, naming what was wrong
    and what to pass instead (a ValueError too, as scikit-learn's validation raises)."""
