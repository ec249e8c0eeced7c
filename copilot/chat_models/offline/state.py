"""The dialogue state: what the last turns showed, in order.

A follow-up ("when did it start?", "the second one", "the Mandrill one",
"is there a runbook for that?") is read against it. It is rebuilt from the
stored messages on every turn (`reading.conversation_state`), so it needs
no column of its own and survives reloads and restarts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Remembered:
    """An incident an earlier turn's tools returned, as the model read it."""

    incident_id: str
    title: str
    application: str = ""
    occurred_at: str = ""
    text: str = ""  # the whole block, for matching names and topics


@dataclass(frozen=True)
class RememberedDocument:
    """A knowledge document an earlier turn showed."""

    doc_id: str
    title: str
    doc_type: str = ""
    related: tuple[str, ...] = ()  # the incidents it draws on, as the tool listed them


@dataclass(frozen=True)
class ConversationState:
    """The incidents (and documents) the latest turn that found any was about."""

    focus: tuple[Remembered, ...] = ()
    last_question: str = ""
    documents: tuple[RememberedDocument, ...] = ()
    documents_question: str = ""  # what the documents answered, in the asker's words
    # When the focus is one incident read in detail, the listing before it: people
    # walk down a list ("the second one?", then "and the CI one?").
    listed: tuple[Remembered, ...] = ()
    # Every incident the earlier turns showed, latest turn first: "the Azure Storage
    # one" may name a past fix under a runbook two turns back.
    seen: tuple[Remembered, ...] = ()

    @property
    def topic(self) -> str:
        """What the conversation is on: the focused incident's title (the earlier
        question may itself be a follow-up such as "how much data was lost?")."""
        return self.focus[0].title if self.focus else self.last_question
