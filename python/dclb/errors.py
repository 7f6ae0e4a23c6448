"""The one exception type for user mistakes.

Anything a user can get wrong (a scenario field, a CDF file, an override, a results directory) raises
:class:`ScenarioError` with a one-line message that starts with the field or file it concerns. The CLI prints
that line and exits with status 2; it never shows a traceback for these.
"""


class ScenarioError(ValueError):
    """A user-facing input error; ``str(err)`` is the complete one-line message."""
