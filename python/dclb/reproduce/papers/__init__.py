"""One module per paper, each defining ``PAPER`` (a :class:`dclb.reproduce.spec.Paper`)."""
