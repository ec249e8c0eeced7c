"""/api/incident: incident intake for other systems (included under api/)."""

from django.urls import path

from copilot.intake.api import IncidentReportApi

urlpatterns = [
    path("incident", IncidentReportApi.as_view(), name="incident-report"),
]
