#!/usr/bin/env python
"""Django's command-line utility, after attaching to the embedded services."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        # Before anything starts: Ctrl-C or SIGTERM at any moment of start-up
        # must stop what serve started (incidentdesk/shutdown.py). serve sets
        # no Django up: the supervisor stays small (incidentdesk/supervisor.py).
        from incidentdesk import shutdown

        shutdown.install()
        try:
            from incidentdesk import supervisor

            sys.exit(supervisor.main(sys.argv[2:]))
        except shutdown.Interrupted as stop:
            shutdown.ignore()
            print(f"\n{stop} during start-up: stopped what was started.")
        return
    _run()


def _run() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "incidentdesk.settings")
    from incidentdesk import embedded

    embedded.ensure_services()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
