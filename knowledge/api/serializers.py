"""How knowledge documents look in the API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from knowledge.models import KnowledgeDocument


class KnowledgeDocumentSerializer(serializers.ModelSerializer[KnowledgeDocument]):
    """A document in lists; `is_stale` when not validated for KNOWLEDGE_STALE_DAYS."""

    dataset = serializers.CharField(source="version.dataset.slug", read_only=True)
    version = serializers.IntegerField(source="version_id", read_only=True)
    is_stale = serializers.BooleanField(
        read_only=True, help_text="Never validated, or longer ago than KNOWLEDGE_STALE_DAYS."
    )
    # A string: empty when the source gave none (the model's URLField said `format: uri`).
    source_url = serializers.CharField(read_only=True, help_text="Where it came from, or empty.")

    class Meta:
        model = KnowledgeDocument
        fields = [
            "doc_id", "title", "type", "services", "tags", "related_incidents", "path",
            "source_url", "last_validated_at", "is_stale", "dataset", "version",
        ]  # fmt: skip
        read_only_fields = fields


class KnowledgeDocumentDetailSerializer(KnowledgeDocumentSerializer):
    extra = serializers.DictField(read_only=True)

    class Meta(KnowledgeDocumentSerializer.Meta):
        fields = [*KnowledgeDocumentSerializer.Meta.fields, "body", "extra", "updated_at"]
        read_only_fields = fields


class KnowledgeHitSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    title = serializers.CharField()
    type = serializers.ChoiceField(choices=KnowledgeDocument.Type.choices)
    services = serializers.ListField(child=serializers.CharField())
    relevance = serializers.FloatField(help_text="0-1; the best hit is 1.")
    preview = serializers.CharField()
    path = serializers.CharField()


class KnowledgeGroupsSerializer(serializers.Serializer[Any]):
    runbooks = KnowledgeHitSerializer(many=True)
    postmortems = KnowledgeHitSerializer(many=True)
    architecture = KnowledgeHitSerializer(many=True)
    known_issues = KnowledgeHitSerializer(many=True)
