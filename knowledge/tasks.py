"""Background jobs for knowledge documents."""

from celery import shared_task

from knowledge.models import KnowledgeDocument
from knowledge.services import knowledge_document_reembed


@shared_task(autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=5)
def knowledge_document_embed(document_id: int) -> int:
    """Re-chunk and re-embed one document after an edit."""
    document = KnowledgeDocument.objects.filter(pk=document_id).first()
    if document is None:
        return 0  # deleted since the edit: nothing to do
    return knowledge_document_reembed(document=document)
