"""Server-rendered incident pages. Thin: parse the request, call a selector."""

from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from incidentdesk.errors import IncidentDeskError, NotFoundError, StaffOnlyError, page_status
from incidents import dataset_selectors, ranking, selectors, services
from incidents.models import Dataset, DatasetVersion, Incident, RetiredReport

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
        retired = selectors.retired_report_get(incident_id=incident_id)
        if retired is None:
            raise Http404(exc.message) from None
        return _retired_report(request, retired)
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


def _retired_report(request: HttpRequest, retired: RetiredReport) -> HttpResponse:
    """A report's old link: to the incident it was merged into, or why it is gone (410).

    A redirect (302, not 301: browsers would cache it and skip the message).
    """
    if retired.outcome == RetiredReport.Outcome.MERGED and retired.merged_into:
        messages.info(
            request,
            f"{retired.incident_id} was a chat report; staff merged it into "
            f"{retired.merged_into}, shown here.",
        )
        return redirect("incident-detail", retired.merged_into)
    return render(request, "incidents/retired.html", {"report": retired}, status=410)


# --- review of chat reports (staff) ---------------------------------------------------

REVIEW_EDITABLE = ("title", "impacted_application", "severity")


def _require_staff(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise StaffOnlyError("Only staff review reported incidents.")


def incident_review_list(request: HttpRequest, status: int = 200) -> HttpResponse:
    """Chat reports waiting for a person: accept (with edits), merge or discard each."""
    _require_staff(request)
    context = {"reports": selectors.incident_list_for_review()[:200]}
    return render(request, "incidents/review.html", context, status=status)


@require_POST
def incident_review_action(request: HttpRequest, pk: int) -> HttpResponse:
    """accept | merge (into=<incident id>) | discard; errors come back as a message."""
    _require_staff(request)
    try:
        report = selectors.incident_get_for_review(pk=pk)
    except NotFoundError as exc:
        raise Http404(exc.message) from None
    action = request.POST.get("action", "")
    if action not in {"accept", "merge", "discard"}:
        return HttpResponse("Unknown action.", status=400, content_type="text/plain")
    try:
        done = _review(request, action, report)
    except IncidentDeskError as exc:
        # The list again, with the reason, as a 4xx: nothing was changed.
        messages.error(request, f"{report.incident_id}: {exc.message}")
        return incident_review_list(request, status=page_status(exc))
    messages.success(request, done)
    return redirect("incident-review")


def _review(request: HttpRequest, action: str, report: Incident) -> str:
    """One review service call; the message that says what happened."""
    if action == "accept":
        changes = {
            name: request.POST[name].strip()
            for name in REVIEW_EDITABLE
            if name in request.POST and request.POST[name].strip() != getattr(report, name)
        }
        accepted = services.incident_review_accept(incident=report, changes=changes)
        return f"{accepted.incident_id} accepted: {accepted.title}"
    if action == "discard":
        services.incident_review_discard(incident=report)
        return f"{report.incident_id} discarded"
    target = selectors.incident_get_by_searched_id(request.POST.get("into", ""))
    if target is None:
        raise NotFoundError("No active incident has that id.")
    services.incident_review_merge(incident=report, into=target)
    return f"{report.incident_id} merged into {target.incident_id}"
