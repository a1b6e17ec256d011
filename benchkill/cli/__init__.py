"""Layer ``cli``: the ``benchkill`` command line, thin over the library.

Owns :mod:`.main` (the table of commands, the entry point, the exit codes),
:mod:`.common_args` (the options commands share, one per concept), :mod:`.args` (the
argparse ``type=`` checks), :mod:`.deprecation` (old spellings kept one release),
:mod:`.outputs` (files written safely) and one ``cmd_<name>`` module per command,
imported only when its command runs.  May import every other layer; nothing imports it.
"""
