"""The Celery app; the worker attaches to the same embedded services as the web."""

import os

from celery import Celery

from incidentdesk import embedded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "incidentdesk.settings")

app = Celery("incidentdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _start_services(**kwargs: object) -> None:
    """Attach to (or start) the embedded services before a worker touches them."""
    embedded.ensure_services()
