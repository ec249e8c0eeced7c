"""The Celery app; the worker attaches to the same embedded services as the web."""

import os

from celery import Celery
from celery.signals import task_postrun

from incidentdesk import embedded
from incidentdesk.memory import release_free_memory

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "incidentdesk.settings")

app = Celery("incidentdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _start_services(**kwargs: object) -> None:
    """Attach to (or start) the embedded services before a worker touches them."""
    embedded.ensure_services()


@task_postrun.connect
def _release_memory(**kwargs: object) -> None:
    """An import's batches are freed when it ends; give them back to the system, or
    the pool process keeps its largest import's peak until it is restarted."""
    release_free_memory()
