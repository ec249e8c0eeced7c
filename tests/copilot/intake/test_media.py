"""Screenshots: OCR of an error dialog, and clear errors for bad uploads."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pytest_django.fixtures import Settings

from copilot.intake import media
from incidentdesk.errors import IncidentDeskError, ValidationError
from tests.copilot.intake.conftest import error_dialog_png


def image_bytes(fmt: str, size: tuple[int, int] = (40, 20)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, format=fmt)
    return buffer.getvalue()


def test_ocr_reads_the_error_code_from_a_drawn_error_dialog() -> None:
    shot = media.screenshot_validate(
        data=error_dialog_png(["Error 502: Bad Gateway", "Code ERR_PAY_4012"])
    )
    text = media.screenshot_ocr(shot)
    assert "502" in text
    assert "ERR_PAY_4012" in text


def test_ocr_runs_within_its_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """tesseract's address space is capped: past it OCR fails with a reason, and the
    intake step that asked is told (a failed step degrades the answer)."""
    shot = media.screenshot_validate(data=error_dialog_png(["Error 502: Bad Gateway"]))
    monkeypatch.setattr(media, "OCR_MEMORY_LIMIT_MB", 8)  # less than its libraries need
    with pytest.raises(IncidentDeskError, match="OCR failed within 8 MB: "):
        media.screenshot_ocr(shot)


def test_png_and_jpeg_are_accepted_by_their_content() -> None:
    assert media.screenshot_validate(data=image_bytes("PNG")).format == "PNG"
    jpeg = media.screenshot_validate(data=image_bytes("JPEG"))
    assert (jpeg.format, jpeg.content_type) == ("JPEG", "image/jpeg")


@pytest.mark.parametrize("fmt", ["GIF", "BMP", "WEBP"])
def test_other_image_types_are_refused(fmt: str) -> None:
    with pytest.raises(ValidationError, match=f"must be a PNG or JPEG image, not {fmt}"):
        media.screenshot_validate(data=image_bytes(fmt))


def test_a_file_that_is_not_an_image_is_refused_whatever_its_name() -> None:
    with pytest.raises(ValidationError, match="this file is not an image") as caught:
        media.screenshot_validate(data=b"%PDF-1.7 pretending to be screenshot.png")
    assert caught.value.extra == {"image": "unsupported type"}


def test_a_truncated_png_is_reported_as_corrupt() -> None:
    png = image_bytes("PNG", (400, 300))
    with pytest.raises(ValidationError, match="corrupt or truncated"):
        media.screenshot_validate(data=png[: len(png) // 2])


def test_a_png_with_a_broken_body_is_reported_as_corrupt() -> None:
    png = bytearray(error_dialog_png())
    png[200:260] = b"\x00" * 60  # inside the compressed image data
    with pytest.raises(ValidationError, match="corrupt or truncated"):
        media.screenshot_validate(data=bytes(png))


def test_a_screenshot_over_the_limit_is_refused_with_the_limit(settings: Settings) -> None:
    settings.INTAKE_MAX_IMAGE_BYTES = 2048
    big = image_bytes("PNG", (40, 20)) + b"\x00" * 4096
    with pytest.raises(ValidationError, match=r"The screenshot is 0\.0 MB; the limit is 0\.0 MB"):
        media.screenshot_validate(data=big)


def test_an_empty_screenshot_is_refused() -> None:
    with pytest.raises(ValidationError, match="empty"):
        media.screenshot_validate(data=b"")


@pytest.mark.parametrize("size", [(1, 1000), (1, 30000), (2000, 40)])
def test_an_image_thinner_than_a_screenshot_is_refused_before_ocr(size: tuple[int, int]) -> None:
    with pytest.raises(ValidationError, match="one side may be at most 25 times") as caught:
        media.screenshot_validate(data=image_bytes("PNG", size))
    assert caught.value.extra == {"image": "too narrow"}


def test_a_decompression_bomb_is_refused_from_its_header() -> None:
    buffer = io.BytesIO()
    Image.new("1", (20000, 20000), 0).save(buffer, format="PNG")  # 50 MB here, 400 M pixels
    with pytest.raises(ValidationError, match="more than 40,000,000 pixels") as caught:
        media.screenshot_validate(data=buffer.getvalue())
    assert caught.value.extra == {"image": "too many pixels"}


@pytest.mark.parametrize(
    ("size", "read_as"),
    [
        ((600, 300), (1200, 600)),  # small UI fonts: scaled up to OCR_MIN_WIDTH
        ((1920, 1080), (1920, 1080)),  # wide enough: read as it is
        ((40, 1000), (800, 20000)),  # tall and thin: the upscale stops at OCR_MAX_PIXELS
        ((1, 1000), (126, 126491)),  # (refused earlier) still bounded if it got here
    ],
)
def test_ocr_upscaling_is_bounded(size: tuple[int, int], read_as: tuple[int, int]) -> None:
    assert media.ocr_size(*size) == read_as
    width, height = media.ocr_size(*size)
    assert width * height <= media.OCR_MAX_PIXELS * 1.001


def test_ocr_reads_a_tall_screenshot_without_scaling_it_past_the_bound() -> None:
    shot = media.screenshot_validate(data=image_bytes("PNG", (40, 1000)))
    assert media.screenshot_ocr(shot) == ""


def test_voice_notes_are_refused_offline_with_a_clear_message(settings: Settings) -> None:
    settings.OPENAI_API_KEY = ""
    with pytest.raises(ValidationError, match="Voice notes need the online model"):
        media.voice_note_validate(data=b"RIFF....WAVEfmt ")
