"""Background jobs for the copilot."""

import datetime as dt

from celery import shared_task
from django.conf import settings

from copilot.models import GoldenExample
from copilot.services import conversation_purge_deleted, golden_example_embed


@shared_task(autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=5)
def golden_example_embed_task(example_id: int) -> bool:
    """Embed a golden example after it was saved in the admin."""
    example = GoldenExample.objects.filter(pk=example_id).first()
    if example is None:
        return False
    golden_example_embed(example=example)
    return True


@shared_task
def conversation_purge_deleted_task() -> int:
    """Daily (CELERY_BEAT_SCHEDULE): purge conversations deleted past the undo period."""
    days = settings.CONVERSATION_PURGE_AFTER_DAYS
    return conversation_purge_deleted(older_than=dt.timedelta(days=days))
