"""List filters for incidents, versions and import jobs, defined once.

The selectors apply them; the API documents its query parameters from them
(incidentdesk.api.schema.filter_parameters).
"""

from __future__ import annotations

from django_filters import rest_framework as filters

from incidentdesk.filtering import IntegerFilter, StrictBooleanFilter
from incidents.models import DatasetVersion, ImportJob, Incident


class IncidentFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    application = filters.CharFilter(
        field_name="impacted_application", lookup_expr="iexact", label="Impacted application"
    )
    occurred_after = filters.DateFilter(
        field_name="occurred_at", lookup_expr="gte", label="Occurred on or after (YYYY-MM-DD)"
    )
    occurred_before = filters.DateFilter(
        field_name="occurred_at", lookup_expr="lte", label="Occurred on or before (YYYY-MM-DD)"
    )
    dataset = filters.CharFilter(field_name="version__dataset__slug", label="Dataset slug")
    version = IntegerFilter(
        field_name="version_id", label="Dataset version id (staff: any version)"
    )
    severity = filters.CharFilter(lookup_expr="iexact", label="Severity, e.g. SEV2")
    category = filters.CharFilter(lookup_expr="iexact", label="Category")
    repeat = StrictBooleanFilter(field_name="repeat_incident", label="Repeat incidents only")

    class Meta:
        model = Incident
        fields: list[str] = []


class DatasetVersionFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    dataset = filters.CharFilter(field_name="dataset__slug", label="Dataset slug")
    status = filters.ChoiceFilter(choices=DatasetVersion.Status.choices, label="Status")

    class Meta:
        model = DatasetVersion
        fields: list[str] = []


class ImportJobFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    dataset = filters.CharFilter(field_name="version__dataset__slug", label="Dataset slug")
    version = IntegerFilter(field_name="version_id", label="Dataset version id")
    status = filters.ChoiceFilter(choices=ImportJob.Status.choices, label="Status")

    class Meta:
        model = ImportJob
        fields: list[str] = []
