"""A report's screenshot file lives exactly as long as its row: purging the
conversation (or the evaluation's clean-up, or deleting its owner) removes it
from disk, and nothing else does."""

from __future__ import annotations

import datetime as dt
import os
from io import StringIO
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from copilot.evaluation import EVAL_USERNAME, conversation_cleanup
from copilot.intake import media
from copilot.intake.services import report_screenshot_store
from copilot.models import Conversation, Message, ReportScreenshot
from copilot.services import conversation_create, conversation_delete, conversation_message_append
from tests.copilot.intake.conftest import error_dialog_png
from tests.factories import TicketFactory, UserFactory


def _reported_with_screenshot(owner: User, text: str = "Checkout 502s") -> Path:
    """A conversation whose report carries a real PNG on disk; the file's path."""
    conversation = conversation_create(owner=owner)
    message = conversation_message_append(
        conversation=conversation, role=Message.Role.USER, content=text
    )
    report_screenshot_store(
        message=message, screenshot=media.screenshot_validate(data=error_dialog_png())
    )
    path = Path(ReportScreenshot.objects.get(message=message).image.path)
    assert path.is_file()
    return path


def _deleted_long_ago(owner: User) -> None:
    for conversation in Conversation.objects.filter(owner=owner):
        conversation_delete(conversation=conversation, user=owner)
    old = timezone.now() - dt.timedelta(days=30)
    Conversation.objects.filter(owner=owner).update(deleted_at=old)


def _age(path: Path, days: int) -> None:
    stamp = (timezone.now() - dt.timedelta(days=days)).timestamp()
    os.utime(path, (stamp, stamp))


def test_purging_a_deleted_conversation_deletes_its_screenshot_file(
    alice: User, django_capture_on_commit_callbacks: Any
) -> None:
    erin = UserFactory(username="erin")
    purged, kept = _reported_with_screenshot(alice), _reported_with_screenshot(erin)
    _deleted_long_ago(alice)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("purge_conversations", stdout=StringIO())
    assert not purged.exists()
    assert not ReportScreenshot.objects.filter(message__conversation__owner=alice).exists()
    assert kept.is_file()  # erin's conversation is alive


def test_a_deleted_conversation_keeps_its_file_until_the_purge_for_undo(
    alice: User, django_capture_on_commit_callbacks: Any
) -> None:
    path = _reported_with_screenshot(alice)
    for conversation in Conversation.objects.filter(owner=alice):
        conversation_delete(conversation=conversation, user=alice)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("purge_conversations", stdout=StringIO())
    assert path.is_file()


def test_deleting_a_ticket_keeps_the_screenshot_its_conversation_still_holds(
    alice: User, django_capture_on_commit_callbacks: Any
) -> None:
    path = _reported_with_screenshot(alice)
    message = Message.objects.get(conversation__owner=alice)
    ticket = TicketFactory(
        key="DESK-9", title="502s", conversation=message.conversation, created_by=alice,
        report_message=message,
    )  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        ticket.delete()
    assert path.is_file()  # the row is still there: the file goes with the conversation
    _deleted_long_ago(alice)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("purge_conversations", stdout=StringIO())
    assert not path.exists()


def test_the_evaluation_clean_up_leaves_no_screenshot_file(
    db: None, django_capture_on_commit_callbacks: Any
) -> None:
    path = _reported_with_screenshot(UserFactory(username=EVAL_USERNAME))
    with django_capture_on_commit_callbacks(execute=True):
        conversation_cleanup()
    assert not path.exists()


def test_files_whose_rows_went_another_way_are_swept_after_a_day(
    alice: User, django_capture_on_commit_callbacks: Any
) -> None:
    orphan, fresh_orphan = _reported_with_screenshot(alice), None
    alice.delete()  # the admin's user delete: conversations cascade, no service runs
    erin = UserFactory(username="erin")
    fresh_orphan = _reported_with_screenshot(erin, "Settlement rows missing")
    ReportScreenshot.objects.filter(message__conversation__owner=erin).delete()
    live = _reported_with_screenshot(erin, "Still here")
    _age(orphan, 2)
    _age(live, 30)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("purge_conversations", stdout=StringIO())
    assert not orphan.exists()
    assert fresh_orphan.is_file()  # may be a report whose row is being written
    assert live.is_file()
