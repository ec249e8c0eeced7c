"""Bodies twisted refused under daphne reach Django and its error format (issue 17 item 13).

twisted, under daphne, parsed every POST form itself and answered one it could not
split (an empty multipart, `--boundary--`) with a bare 400, no body, no content type.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from tests.processes import Daphne, Stack

EMPTY_MULTIPART = b"--c637--\r\n"


def post(daphne: Daphne, path: str, body: bytes) -> tuple[int, str, dict[str, object]]:
    request = urllib.request.Request(  # noqa: S310 - our daphne's http:// address
        daphne.base + path,
        data=body,
        method="POST",
        headers={
            "Authorization": f"Token {daphne.token}",
            "Content-Type": "multipart/form-data; boundary=c637",
        },
    )
    try:
        response = urllib.request.urlopen(request, timeout=30)  # noqa: S310
    except urllib.error.HTTPError as refused:
        response = refused
    with response:
        return response.status, response.headers["Content-Type"], json.loads(response.read())


def test_an_empty_multipart_body_is_answered_by_the_app_in_its_error_format(
    stack: Stack,
) -> None:
    daphne = Daphne(stack)
    status, kind, body = post(daphne, "/api/incident", EMPTY_MULTIPART)
    assert (status, kind) == (400, "application/json")
    assert body["error"]["fields"] == {"text": ["required"]}  # type: ignore[index]
    # alice is not staff: the upload's own answer, not the server's.
    status, kind, body = post(daphne, "/api/datasets/payments/uploads/", EMPTY_MULTIPART)
    assert (status, kind) == (403, "application/json")
    assert body["error"]["code"] == "permission_denied"  # type: ignore[index]
