"""Incident and dataset endpoints under /api/."""

from django.urls import path

from incidentdesk.api.routing import operations
from incidents.api import views

urlpatterns = [
    path(
        "incidents/",
        operations(get=views.IncidentListApi, post=views.IncidentCreateApi),
        name="incidents",
    ),
    path("incidents/search/", views.IncidentSearchApi.as_view(), name="incident-search"),
    path(
        "incidents/<str:incident_id>/",
        operations(get=views.IncidentDetailApi, patch=views.IncidentUpdateApi),
        name="incident",
    ),
    path(
        "datasets/",
        operations(get=views.DatasetListApi, post=views.DatasetCreateApi),
        name="datasets",
    ),
    path("datasets/<str:slug>/", views.DatasetDetailApi.as_view(), name="dataset"),
    path("datasets/<str:slug>/uploads/", views.DatasetUploadApi.as_view(), name="dataset-uploads"),
    path(
        "datasets/<str:slug>/rollback/",
        views.DatasetRollbackApi.as_view(),
        name="dataset-rollback",
    ),
    path("dataset-versions/", views.DatasetVersionListApi.as_view(), name="dataset-versions"),
    path(
        "dataset-versions/<int:version_id>/",
        views.DatasetVersionDetailApi.as_view(),
        name="dataset-version",
    ),
    path(
        "dataset-versions/<int:version_id>/diff/",
        views.DatasetVersionDiffApi.as_view(),
        name="dataset-version-diff",
    ),
    path(
        "dataset-versions/<int:version_id>/activate/",
        views.DatasetVersionActivateApi.as_view(),
        name="dataset-version-activate",
    ),
    path("import-jobs/", views.ImportJobListApi.as_view(), name="import-jobs"),
    path("import-jobs/<int:job_id>/", views.ImportJobDetailApi.as_view(), name="import-job"),
]
