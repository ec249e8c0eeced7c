"""Server-rendered incident pages. Thin: parse the request, call a selector."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from incidents import selectors

MAX_QUERY_LENGTH = 500


def home(request: HttpRequest) -> HttpResponse:
    """The landing page: search the active incidents by meaning."""
    query = request.GET.get("q", "").strip()[:MAX_QUERY_LENGTH]
    results = selectors.incident_search_similar(query=query, limit=10) if query else []
    context = {
        "query": query,
        "results": results,
        "stats": selectors.active_dataset_stats(),
    }
    return render(request, "home.html", context)
