"""The copilot's memory: conversations, their messages, agent-run traces, golden examples."""

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


class Conversation(models.Model):
    """One chat thread of one user; the agent's memory for follow-ups.

    `state` holds short-term memory that is not a message: the incidents the
    last answers were about (for "what was the mitigation?"), and for intake
    the current incident and ticket.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    title = models.CharField(max_length=200, blank=True)
    tracing_enabled = models.BooleanField(
        default=True, help_text="Store tool arguments and results in the agent-run traces."
    )
    state = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]
        indexes = [
            # conversation_list_for_user: a user's sidebar, newest first.
            models.Index(fields=["owner", "-updated_at"], name="copilot_conv_owner_updated"),
        ]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"


class Message(models.Model):
    """A user, assistant or tool message, stored before the next step runs.

    Assistant messages are created when the answer starts and filled as it
    streams (`is_complete` false until done), so a reload shows what was
    already written.
    """

    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"
        TOOL = "tool", "Tool"

    class Feedback(models.TextChoices):
        UP = "up", "Thumbs up"
        DOWN = "down", "Thumbs down"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    run = models.ForeignKey(
        "AgentRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    content = models.TextField(blank=True)
    tool_calls = models.JSONField(
        default=list, blank=True, help_text="Assistant tool calls: [{id, name, arguments}]."
    )
    tool_call_id = models.CharField(max_length=100, blank=True)
    tool_name = models.CharField(max_length=100, blank=True)
    data = models.JSONField(
        default=dict, blank=True, help_text="Tool results as structured data, for the UI."
    )
    citations = models.JSONField(default=list, blank=True)
    is_complete = models.BooleanField(default=True)
    feedback = models.CharField(max_length=10, choices=Feedback.choices, blank=True)
    feedback_comment = models.TextField(blank=True)
    feedback_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [
            # conversation history in order (every turn loads it).
            models.Index(fields=["conversation", "created_at"], name="copilot_msg_conv_created"),
            # the admin review queue of thumbs-down answers.
            models.Index(
                fields=["feedback"],
                name="copilot_msg_feedback",
                condition=~models.Q(feedback=""),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class AgentRun(models.Model):
    """The trace of one answer: model, rounds, timings, tokens, citations."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="runs")
    question = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    model = models.CharField(max_length=200)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    rounds = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    first_event_ms = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    golden_examples = models.JSONField(default=list, blank=True)
    citations_kept = models.JSONField(default=list, blank=True)
    citations_dropped = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.status})"


class ToolCall(models.Model):
    """One tool call of a run. Payloads are empty when tracing is off."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="tool_calls")
    round = models.PositiveSmallIntegerField()
    call_id = models.CharField(max_length=100)
    name = models.CharField(max_length=100)
    arguments = models.JSONField(default=dict, blank=True)
    result_text = models.TextField(blank=True)
    result_count = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "round", "pk"]

    def __str__(self) -> str:
        return f"{self.name} (run {self.run_id})"
