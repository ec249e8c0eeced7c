"""Server-rendered knowledge pages. Thin: parse the request, call a selector."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from incidentdesk.errors import NotFoundError
from incidentdesk.richtext import render_markdown
from knowledge import selectors, services
from knowledge.models import KnowledgeDocument

PAGE_SIZE = 25


def knowledge_list(request: HttpRequest) -> HttpResponse:
    """Active documents filtered by type, service and tag, with their freshness."""
    chosen = {name: request.GET.get(name, "").strip() for name in ("type", "service", "tag")}
    documents = selectors.knowledge_document_list(
        type_filter=chosen["type"], service_filter=chosen["service"], tag_filter=chosen["tag"]
    )
    page = Paginator(documents, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "rows": [(doc, selectors.document_freshness(doc)) for doc in page],
        "chosen": chosen,
        "types": KnowledgeDocument.Type.choices,
        "facets": selectors.knowledge_facets(),
        "query_string": query.urlencode(),
    }
    return render(request, "knowledge/list.html", context)


def _document(request: HttpRequest, doc_id: str) -> KnowledgeDocument:
    try:
        return selectors.knowledge_document_get(doc_id=doc_id, user=request.user)
    except NotFoundError as exc:
        raise Http404(exc.message) from None


def knowledge_detail(request: HttpRequest, doc_id: str) -> HttpResponse:
    """One document rendered from its (sanitised) markdown, with its freshness."""
    document = _document(request, doc_id)
    context = {
        "document": document,
        "body_html": render_markdown(document.body),
        "freshness": selectors.document_freshness(document),
        "stale_after_days": selectors.stale_after_days(),
    }
    return render(request, "knowledge/detail.html", context)


@require_POST
def knowledge_mark_validated(request: HttpRequest, doc_id: str) -> HttpResponse:
    """Staff vouch for the document as of now (a 403 for everyone else)."""
    document = _document(request, doc_id)
    services.knowledge_document_mark_validated(document=document, user=request.user)  # type: ignore[arg-type]
    messages.success(request, f"{document.doc_id} marked validated today.")
    return redirect("knowledge-detail", document.doc_id)
