"""User errors, and the one line a user sees for any error.

Anything a user can get wrong raises a :class:`UserError` (a ``ValueError``) whose text is the complete
one-line message, starting with the field, option or path it concerns:

* :class:`ScenarioError` for a scenario: a field, a CDF or flow-list file, an override, a sweep grid;
* :class:`dclb.store.StoreError` for a results directory (not a store, a failed query);
* :class:`UserError` itself for any other option: plot and report options, ``--jobs``, ``--dask``,
  ``DCLB_MEMORY_LIMIT``.

The CLI prints that line and exits with status 2; it never shows a traceback for these. :func:`one_line`
is how every error becomes that line, for the CLI and for the error a failed sweep point records.
"""

from __future__ import annotations


class UserError(ValueError):
    """A mistake in what the user asked for; ``str(err)`` is the complete one-line message."""


class ScenarioError(UserError):
    """A mistake in a scenario (a field, a file it names, an override or grid value)."""


def one_line(error: BaseException, *, name_type: bool = False) -> str:
    """``error`` as one line: its message with the lines joined and runs of blanks collapsed (a line of
    only carets, such as DuckDB's under a query, is dropped). With ``name_type``, an error that is not a
    ``ValueError`` (user and engine errors are, and say all there is to say) is prefixed with its type, as
    ``TypeError: ...``: it is a bug, and the type tells which. An empty message gives the type's name."""
    lines = [line for line in str(error).splitlines() if set(line) - set("^ \t")]
    text = " ".join(" ".join(lines).split())
    if name_type and not isinstance(error, ValueError):
        text = f"{type(error).__name__}: {text}" if text else ""
    return text or type(error).__name__


class StoreError(UserError):
    """A path is not a usable result store, or a store operation failed (:mod:`dclb.store`)."""
