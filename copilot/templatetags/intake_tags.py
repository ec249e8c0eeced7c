"""Template helpers for the intake card and the uploads (screenshot, voice note)."""

from __future__ import annotations

from django import template
from django.conf import settings

from incidentdesk.richtext import document_url, incident_url
from incidents.parsing import INCIDENT_ID_RE, normalize_incident_id
from knowledge.parsing import DOCUMENT_ID_IN_TEXT_RE

register = template.Library()


@register.filter
def source_url(source: str) -> str:
    """The page of an action's source: an incident, a document, or none ("severity rules")."""
    if INCIDENT_ID_RE.match(normalize_incident_id(source)):
        return incident_url(source)
    if DOCUMENT_ID_IN_TEXT_RE.fullmatch(source):
        return document_url(source)
    return ""


@register.simple_tag
def intake_max_image_bytes() -> int:
    """The screenshot size limit, so the browser refuses a big file before uploading it."""
    return int(settings.INTAKE_MAX_IMAGE_BYTES)


@register.simple_tag
def intake_max_audio_bytes() -> int:
    """The voice-note size limit, so the browser refuses a big file before uploading it."""
    return int(settings.INTAKE_MAX_AUDIO_BYTES)
