"""`python -m fathom ARGS...` runs the fathom command-line tool with ARGS: the same program as
`fathom` (the executable built beside this package, or in a wheel shipped inside it), so its
commands, options, output and exit codes (0 ok, 2 bad input, 1 internal error) are the CLI's.
FATHOM_CLI names another executable to run instead."""
import os
import sys

import fathom  # sets FATHOM_DATA_DIR to the catalogs an installed wheel carries


def executable():
    """The fathom executable `python -m fathom` runs, or None."""
    named = os.environ.get("FATHOM_CLI")
    if named:
        return named
    here = os.path.dirname(os.path.abspath(fathom.__file__))
    shipped = os.path.join(here, "bin", "fathom")
    return shipped if os.access(shipped, os.X_OK) else None


def main():
    exe = executable()
    if exe is None:
        sys.stderr.write("fathom: internal error: no fathom executable beside the package "
                         "(expected fathom/bin/fathom; set FATHOM_CLI to the built one)\n")
        return 1
    sys.stdout.flush()
    os.execv(exe, [exe] + sys.argv[1:])  # the CLI's own exit status and signals


if __name__ == "__main__":
    sys.exit(main())
