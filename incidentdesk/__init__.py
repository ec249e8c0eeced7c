"""The IncidentDesk project: settings, URLs, ASGI, Celery, embedded services."""

from incidentdesk.celery import app as celery_app

__all__ = ["celery_app"]
