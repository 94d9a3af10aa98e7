"""The statistics every command uses, in one place: summaries of the methodology studies (``summary``), ratios
of two sets of measurements with their intervals and tests (``ratios``: Welch, run-level, TOST, Holm), and the
accuracy of predictions against measurements (``accuracy``: MAPE, coverage). Pure functions on plain numbers;
the search, verify, the report and compare import them from here."""
