"""The statistics every command uses, in one place: summaries of the methodology studies (``summary``), ratios
of two sets of measurements with their intervals and tests (``ratios``: Welch, run-level, TOST, Holm), a run's
own shift measured in a session and ratios that count it (``drift``), how large a change a campaign can detect
(``power``), replicate error (``pure_error``), and the accuracy of predictions against measurements
(``accuracy``: MAPE, coverage). Pure functions on plain numbers; the search, verify, the report and compare import
them from here."""
