"""How incidents, datasets, versions and import jobs look in the API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from incidentdesk.api.inputs import InputSerializer, StrictBooleanField, WebAddressField
from incidents.importers import FORMATS
from incidents.models import Dataset, DatasetVersion, ImportJob, Incident


class IncidentSerializer(serializers.ModelSerializer[Incident]):
    """An incident in lists: what tells one from another."""

    dataset = serializers.CharField(source="version.dataset.slug", read_only=True)
    version = serializers.IntegerField(source="version_id", read_only=True)
    # A string: empty when the source gave none (the model's URLField said `format: uri`).
    source_url = serializers.CharField(read_only=True, help_text="Where it came from, or empty.")

    class Meta:
        model = Incident
        fields = [
            "incident_id", "title", "impacted_application", "occurred_at", "severity",
            "status", "category", "repeat_incident", "tags", "source_url", "dataset", "version",
            "review_status",  # "reported": a chat report staff have not reviewed yet
        ]  # fmt: skip
        read_only_fields = fields


class IncidentDetailSerializer(IncidentSerializer):
    """An incident with every field, as the copilot reads it."""

    extra = serializers.DictField(read_only=True, help_text="Columns the importer did not know.")

    class Meta(IncidentSerializer.Meta):
        fields = [
            *IncidentSerializer.Meta.fields, "root_cause", "mitigation", "accountable_party",
            "source_system", "body", "extra", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields


class IncidentFieldsSerializer(InputSerializer):
    """The writable fields of an incident (the columns of an import file)."""

    title = serializers.CharField(max_length=500)
    impacted_application = serializers.CharField(max_length=300, required=False, allow_blank=True)
    root_cause = serializers.CharField(required=False, allow_blank=True)
    mitigation = serializers.CharField(required=False, allow_blank=True)
    accountable_party = serializers.CharField(max_length=300, required=False, allow_blank=True)
    source_system = serializers.CharField(max_length=100, required=False, allow_blank=True)
    repeat_incident = StrictBooleanField(required=False)
    severity = serializers.CharField(max_length=20, required=False, allow_blank=True)
    status = serializers.CharField(max_length=50, required=False, allow_blank=True)
    occurred_at = serializers.DateField(required=False, allow_null=True)
    category = serializers.CharField(max_length=100, required=False, allow_blank=True)
    tags = serializers.ListField(child=serializers.CharField(max_length=100), required=False)
    source_url = WebAddressField(max_length=1000, required=False)
    body = serializers.CharField(required=False, allow_blank=True)


class TimeWindowSerializer(serializers.Serializer[Any]):
    start = serializers.DateField(allow_null=True)
    end = serializers.DateField(allow_null=True)
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label


class IncidentFiltersSerializer(serializers.Serializer[Any]):
    """Filters understood from the question (only those found are present)."""

    application = serializers.CharField(required=False)
    applications = serializers.ListField(child=serializers.CharField(), required=False)
    window = TimeWindowSerializer(required=False)
    repeat = serializers.BooleanField(required=False)
    severity = serializers.CharField(required=False)
    category = serializers.CharField(required=False)


class IncidentHitSerializer(serializers.Serializer[Any]):
    incident_id = serializers.CharField()
    title = serializers.CharField()
    impacted_application = serializers.CharField()
    occurred_at = serializers.DateField(allow_null=True)
    severity = serializers.CharField()
    status = serializers.CharField()
    category = serializers.CharField()
    repeat_incident = serializers.BooleanField()
    root_cause = serializers.CharField()
    mitigation = serializers.CharField()
    accountable_party = serializers.CharField()
    source_url = serializers.CharField()
    score = serializers.FloatField(help_text="Reciprocal-rank-fusion score; 0 when listed by date.")
    matched = serializers.CharField(help_text="The chunk of the incident that matched best.")


class DatasetSerializer(serializers.ModelSerializer[Dataset]):
    version_count = serializers.IntegerField(read_only=True)
    active_version_id = serializers.IntegerField(read_only=True, allow_null=True)
    active_version_label = serializers.CharField(read_only=True, allow_null=True)

    class Meta:
        model = Dataset
        fields = [
            "id", "name", "slug", "kind", "description", "created_at",
            "version_count", "active_version_id", "active_version_label",
        ]  # fmt: skip
        read_only_fields = fields


class DatasetVersionSerializer(serializers.ModelSerializer[DatasetVersion]):
    dataset = serializers.CharField(source="dataset.slug", read_only=True)

    class Meta:
        model = DatasetVersion
        fields = [
            "id", "dataset", "label", "status", "embedding_model", "embedding_dimensions",
            "row_count", "chunk_count", "created_at", "activated_at", "notes",
        ]  # fmt: skip
        read_only_fields = fields


class RowErrorSerializer(serializers.Serializer[Any]):
    line = serializers.IntegerField()
    field = serializers.CharField(allow_blank=True)
    reason = serializers.CharField()


class ImportJobSerializer(serializers.ModelSerializer[ImportJob]):
    """An upload's progress and, when done, its outcome and every row error."""

    dataset = serializers.CharField(source="version.dataset.slug", read_only=True)
    version_label = serializers.CharField(source="version.label", read_only=True)
    errors = RowErrorSerializer(many=True, read_only=True)  # type: ignore[assignment]
    file_format = serializers.ChoiceField(choices=["", *FORMATS], read_only=True)

    class Meta:
        model = ImportJob
        fields = [
            "id", "dataset", "version", "version_label", "status", "file_format",
            "activate_when_done", "rows_total", "rows_done", "rows_failed", "created",
            "updated", "unchanged", "errors", "message", "created_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields


class VersionDiffSerializer(serializers.Serializer[Any]):
    """What activating a version changes, against the dataset's active version."""

    version = DatasetVersionSerializer()
    active = DatasetVersionSerializer(allow_null=True)
    rows = serializers.IntegerField()
    active_rows = serializers.IntegerField()
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    changed = serializers.IntegerField()
    added_ids = serializers.ListField(child=serializers.CharField(), help_text="At most 50.")
    removed_ids = serializers.ListField(child=serializers.CharField(), help_text="At most 50.")
    changed_ids = serializers.ListField(child=serializers.CharField(), help_text="At most 50.")
    replaced = serializers.IntegerField(
        help_text="Ids now naming a different record (another title), not counted as changed."
    )
    replaced_ids = serializers.ListField(child=serializers.CharField(), help_text="At most 50.")
