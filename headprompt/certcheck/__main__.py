"""``python -m headprompt.certcheck FILE``; from a copied folder ``python -S -m certcheck FILE``
(from the folder's parent) or ``python -I -S path/to/certcheck FILE`` (the folder run as a
script, which isolated mode allows: ``-I`` never puts the working directory on ``sys.path``, so
``-I -m`` cannot find a copied folder). See :mod:`.cli`."""

import sys

if __package__:
    from .cli import main
else:                      # the folder run as a script: import it as the package it is
    import importlib
    import os
    _folder = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(_folder))
    main = importlib.import_module(os.path.basename(_folder) + ".cli").main

if __name__ == "__main__":
    sys.exit(main())
