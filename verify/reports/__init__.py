"""Reports, the floor above evidence (docs/architecture.md): a theorem check and its evidence
assembled into what the command line prints and the Python API returns. :mod:`.builders` chooses
the report of each theorem: :mod:`.vanilla` (Theorems 3.3, 3.6), :mod:`.scale` (the same above
1,000 states or tokens) and :mod:`.memory` (4.3, 4.6, C.6). :mod:`.requests` holds the typed
request the CLI and the API both build, :mod:`.flags` the checks of its options,
:mod:`.instances` the instance and witness I/O, :mod:`.rationalized` the explicit conversion of
a float instance, :mod:`.verdicts` the verdict rules, :mod:`.rows` and :mod:`.view` the rows,
text, HTML, frame and plot of a report, and :mod:`.render` the JSON and rich text output."""
