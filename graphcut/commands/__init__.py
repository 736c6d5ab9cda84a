"""Sub-commands of the ``graphcut`` command line (see graphcut.cli)."""
