"""Background jobs for incident datasets."""

from celery import shared_task

from incidents.models import ImportJob
from incidents.services import import_job_run_now


@shared_task(autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def import_job_run(job_id: int) -> str:
    """Run an uploaded import; progress is written to the job row as it goes."""
    job = ImportJob.objects.select_related("version__dataset").get(pk=job_id)
    if job.status != ImportJob.Status.QUEUED:
        return job.status  # already run (acks_late redelivery)
    return import_job_run_now(job=job).status
