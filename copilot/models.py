"""The copilot's curated memory. Conversations and runs arrive with their issues."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from pgvector.django import VectorField

from incidents.models import EMBEDDING_DIMENSIONS, hnsw_cosine_index


class GoldenExample(models.Model):
    """A verified question and answer, added to the prompt of similar questions.

    The embedding is filled by a Celery task after each save, so editing the
    question in the admin never waits on the model.
    """

    class Source(models.TextChoices):
        CURATED = "curated", "Curated"
        FEEDBACK = "feedback", "From feedback"

    question = models.TextField()
    answer = models.TextField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedded_question = models.TextField(
        blank=True, help_text="The question text the embedding was computed from."
    )
    is_active = models.BooleanField(default=True)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.CURATED)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="golden_examples",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(fields=["question"], name="%(app_label)s_%(class)s_unique_q"),
        ]
        indexes = [
            # golden_example_list_nearest: cosine nearest neighbours.
            hnsw_cosine_index("copilot_golden_embedding_hnsw"),
        ]

    def __str__(self) -> str:
        return self.question[:80]

    @property
    def needs_embedding(self) -> bool:
        """True when the question changed since it was last embedded."""
        return self.embedding is None or self.embedded_question != self.question
