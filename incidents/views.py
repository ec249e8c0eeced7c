"""Server-rendered incident pages. Thin: parse the request, call a selector."""

from __future__ import annotations

import datetime as dt

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode

from incidentdesk.errors import NotFoundError
from incidents import dataset_selectors, ranking, selectors
from incidents.models import Dataset, DatasetVersion

MAX_QUERY_LENGTH = 500
PAGE_SIZE = 20


def _date(raw: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(raw) if raw else None
    except ValueError:
        return None  # a hand-edited URL; the filter is simply ignored


def _version(request: HttpRequest) -> DatasetVersion | None:
    """The version the list is pinned to; a 404 if the user may not see it."""
    raw = request.GET.get("version", "")
    if not raw.isdigit():
        return None
    version = selectors.incident_versions().filter(pk=int(raw)).first()
    if version is not None and not version.is_visible_to(request.user):
        raise Http404("No such dataset version.")
    return version


def _filters(request: HttpRequest) -> selectors.IncidentListFilters:
    params = request.GET
    return selectors.IncidentListFilters(
        query=params.get("q", "").strip()[:MAX_QUERY_LENGTH],
        application=params.get("application", "").strip(),
        date_from=_date(params.get("from", "")),
        date_to=_date(params.get("to", "")),
        version=_version(request),
    )


def _detail_url(incident_id: str, version: DatasetVersion | None) -> str:
    url = reverse("incident-detail", args=[incident_id])
    return f"{url}?{urlencode({'version': version.pk})}" if version else url


def incident_list(request: HttpRequest) -> HttpResponse:
    """Hybrid search and filters over incidents, paginated; an exact id opens that incident."""
    filters = _filters(request)
    found = selectors.incident_get_by_searched_id(filters.query, version=filters.version)
    if found is not None:
        return redirect(_detail_url(found.incident_id, filters.version))
    page = Paginator(selectors.incident_list(filters=filters), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "filters": filters,
        "page": page,
        "ranked": bool(ranking.content_words(filters.query)),
        "applications": selectors.incident_applications(filters.version),
        "versions": [v for v in selectors.incident_versions() if v.is_visible_to(request.user)],
        "stats": [
            d for d in dataset_selectors.active_dataset_stats() if d.kind == Dataset.Kind.INCIDENTS
        ],
        "query_string": query.urlencode(),
        "results_query": request.GET.urlencode(),
    }
    return render(request, "incidents/list.html", context)


def _results_url(request: HttpRequest) -> str:
    """The list with the search the user came from (`results` holds its query string).

    Only a query string is taken, appended to our own path, so it cannot point elsewhere.
    """
    results = request.GET.get("results", "").lstrip("?")
    url = reverse("incident-list")
    return f"{url}?{results}" if results else url


def incident_detail(request: HttpRequest, incident_id: str) -> HttpResponse:
    """Every field of one incident, its dataset version and similar incidents."""
    version = request.GET.get("version", "")
    try:
        incident = selectors.incident_get_for_page(
            incident_id=incident_id, version_id=int(version) if version.isdigit() else None
        )
    except NotFoundError as exc:
        raise Http404(exc.message) from None
    if not incident.version.is_visible_to(request.user):
        raise Http404(f"Incident {incident.incident_id} not found.")
    context = {
        "incident": incident,
        "similar": selectors.incident_list_similar(incident=incident),
        "is_active_version": incident.version.status == DatasetVersion.Status.ACTIVE,
        "back_url": _results_url(request),
        "from_results": bool(request.GET.get("results")),
    }
    return render(request, "incidents/detail.html", context)
