#!/usr/bin/env python
"""Django's command-line utility, after attaching to the embedded services."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "incidentdesk.settings")
    from incidentdesk import embedded

    embedded.ensure_services()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
