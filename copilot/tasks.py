"""Background jobs for the copilot."""

from celery import shared_task

from copilot.models import GoldenExample
from copilot.services import golden_example_embed


@shared_task(autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=5)
def golden_example_embed_task(example_id: int) -> bool:
    """Embed a golden example after it was saved in the admin."""
    example = GoldenExample.objects.filter(pk=example_id).first()
    if example is None:
        return False
    golden_example_embed(example=example)
    return True
