from typing import Any

from incidentdesk import demo
from incidentdesk.management.base import SchemaCommand


class Command(SchemaCommand):
    help = "Load the fictional demo data (once) and print the demo login."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--force", action="store_true", help="Import again even if already loaded."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["force"] or not demo.demo_is_loaded():
            self.stdout.write("Loading demo data (first run only)...")
            for line in demo.demo_load():
                self.stdout.write(f"  {line}")
        login = demo.demo_login_ensure()
        self.stdout.write(
            self.style.SUCCESS(f"Demo login: username {login.username}  password {login.password}")
        )
