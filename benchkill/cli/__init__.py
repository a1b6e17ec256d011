"""Layer ``cli``: the ``benchkill`` command line, thin over the library.

Owns :mod:`.main` (the table of commands and the entry point), :mod:`.args` (argparse
``type=`` checks) and one ``cmd_<name>`` module per command, imported only when its
command runs.  May import every other layer; nothing imports it.
"""
