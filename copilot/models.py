"""The copilot's memory: conversations, their messages, agent-run traces, golden examples."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
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

    `state` holds what intake remembers between turns, under `"intake"`
    (the current incident, its ticket and a pending proposal; shape in
    `copilot.intake.state.IntakeState`, read and written through its
    `from_json` and `to_json`). The agent keeps nothing here: what
    the last answers were about (for "what was the mitigation?") is rebuilt
    from the stored messages on every turn (`copilot.chat_models.offline.state`).

    Deleting sets `deleted_at` (hidden from the owner everywhere, undo clears
    it); `purge_conversations` removes rows deleted longer ago than
    CONVERSATION_PURGE_AFTER_DAYS.
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
    deleted_at = models.DateTimeField(
        null=True, blank=True, help_text="Deleted by its owner (undo possible until purged)."
    )

    class Meta:
        ordering = ["-updated_at", "-pk"]
        indexes = [
            # conversation_list_for_user: a user's sidebar, newest first.
            models.Index(fields=["owner", "-updated_at"], name="copilot_conv_owner_updated"),
            # conversation_purge_deleted: the few rows waiting to be purged.
            models.Index(
                fields=["deleted_at"],
                name="copilot_conv_deleted",
                condition=models.Q(deleted_at__isnull=False),
            ),
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
            # conversation_list_for_user(query=...): full-text search of what was said.
            GinIndex(
                SearchVector("content", config="english"),
                name="copilot_msg_content_fts",
                condition=models.Q(role__in=["user", "assistant"]),
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
    # `host:pid` of the process writing the answer (incidentdesk.owners): a run
    # whose process died is failed by `manage.py recover` at once.
    owner = models.CharField(max_length=300, blank=True)
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


# --- incident intake: tickets and the decision ledger ------------------------------

# Built-in ticket keys (DESK-42) come from a PostgreSQL sequence, created in
# the migration: numbers never repeat, even across concurrent requests.
TICKET_KEY_SEQUENCE = "copilot_ticket_key_seq"


class Ticket(models.Model):
    """A ticket filed for a reported incident, in the built-in tracker or in Jira.

    Jira tickets are mirrored here too, so duplicate checks, comments and the
    decision ledger work the same whichever tracker holds the original.
    `idempotency_key` is derived from the conversation and the incident: a
    retried or repeated "file it" returns the ticket already filed.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        IN_PROGRESS = "in_progress", "In progress"
        RESOLVED = "resolved", "Resolved"
        CLOSED = "closed", "Closed"

    class Severity(models.TextChoices):
        SEV1 = "SEV1", "SEV1"
        SEV2 = "SEV2", "SEV2"
        SEV3 = "SEV3", "SEV3"
        SEV4 = "SEV4", "SEV4"

    class Tracker(models.TextChoices):
        BUILTIN = "builtin", "Built-in"
        JIRA = "jira", "Jira"

    key = models.CharField(max_length=50, help_text="DESK-42, or the Jira issue key.")
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    service = models.CharField(max_length=300, blank=True)
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="tickets"
    )
    incident_id = models.CharField(max_length=64, help_text="The reported incident's id.")
    external_url = models.URLField(max_length=1000, blank=True)
    tracker = models.CharField(max_length=20, choices=Tracker.choices, default=Tracker.BUILTIN)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tickets",
    )
    idempotency_key = models.CharField(max_length=200)
    # The message that reported the incident: where its screenshot, if any, hangs.
    report_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["tracker", "key"], name="%(app_label)s_%(class)s_unique_key"
            ),
            models.UniqueConstraint(
                fields=["idempotency_key"], name="%(app_label)s_%(class)s_unique_idempotency"
            ),
        ]
        indexes = [
            # ticket_list_open_for_service: the duplicate check of every report.
            models.Index(fields=["service", "status"], name="copilot_ticket_service_status"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.title}"


class ReportScreenshot(models.Model):
    """The screenshot attached to a report, kept so its ticket can show it.

    Stored under MEDIA_ROOT, which is never served as is: only the ticket's
    screenshot view hands it out, to the reporter or staff.
    """

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="screenshot")
    image = models.FileField(upload_to="screenshots/%Y/%m/")
    content_type = models.CharField(max_length=50)  # checked from the content, never the name
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Screenshot of message {self.message_id}"


class TicketComment(models.Model):
    """A comment on a ticket; `external_id` is Jira's comment id when Jira holds it."""

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="comments")
    body = models.TextField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ticket_comments",
    )
    source_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    external_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.ticket.key}: {self.body[:60]}"


class Decision(models.Model):
    """A decision or action agreed in a conversation: the ledger "what did we decide?" reads.

    Every row keeps its provenance (who said it, when, in which message, and
    the ticket comment that carried it), so the answer can be checked.
    """

    class Kind(models.TextChoices):
        DECISION = "decision", "Decision"
        ACTION = "action", "Action"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="decisions"
    )
    ticket = models.ForeignKey(
        Ticket, null=True, blank=True, on_delete=models.SET_NULL, related_name="decisions"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.DECISION)
    what = models.TextField()
    who = models.CharField(max_length=200, help_text="Who decided, or who owns the action.")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="decisions",
    )
    decided_at = models.DateTimeField()
    source_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="decisions"
    )
    ticket_comment = models.ForeignKey(
        TicketComment, null=True, blank=True, on_delete=models.SET_NULL, related_name="decisions"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["decided_at", "pk"]
        indexes = [
            # decision_list_for_conversation: the ledger in order.
            models.Index(fields=["conversation", "decided_at"], name="copilot_decision_conv_at"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.what[:60]}"


class AnswerForReview(Message):
    """A thumbs-down answer, as the curators' review queue in the admin shows it.

    A proxy: the rows are Messages; the admin lists them through
    `copilot.selectors.message_list_for_review`.
    """

    class Meta:
        proxy = True
        verbose_name = "answer to review"
        verbose_name_plural = "answers to review (thumbs down)"
