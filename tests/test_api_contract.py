"""Bad filter and page values are a 400 naming the field, in the one error body; the
schema documents the page parameters with the bounds the API enforces, and says
what a request body may hold (no unknown field, no control character)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from tests.factories import DatasetVersionFactory, GoldenExampleFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_api_rates")]

LISTS = [
    "/api/incidents/",
    "/api/knowledge/documents/",
    "/api/conversations/",
    "/api/golden-examples/",
    "/api/dataset-versions/",
    "/api/import-jobs/",
]


@pytest.fixture
def as_bob(api_client: APIClient, bob: User) -> APIClient:
    """Staff, so every list (datasets, golden examples) answers."""
    api_client.force_login(bob)
    return api_client


def _field_error(response: Any, field: str) -> str:
    assert response.status_code == 400, (response.status_code, response.content)
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert list(error["fields"]) == [field]
    assert f"{field}:" in error["message"]
    return str(error["fields"][field][0])


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/incidents/?repeat=junk", "repeat"),
        ("/api/incidents/?repeat=yes%20please", "repeat"),
        ("/api/golden-examples/?is_active=maybe", "is_active"),
        ("/api/incidents/?version=abc", "version"),
        ("/api/incidents/?version=0.5", "version"),
        ("/api/knowledge/documents/?version=0.5", "version"),
        ("/api/import-jobs/?version=1.5", "version"),
        ("/api/incidents/?occurred_after=yesterday", "occurred_after"),
    ],
)
def test_a_bad_filter_value_is_a_400_naming_the_filter(
    as_bob: APIClient, url: str, field: str
) -> None:
    _field_error(as_bob.get(url), field)


def test_good_boolean_filter_values_still_filter(as_bob: APIClient) -> None:
    for value in ("true", "false", "TRUE", "1", "0", ""):
        assert as_bob.get("/api/incidents/", {"repeat": value}).status_code == 200, value


@pytest.mark.parametrize("url", LISTS)
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=abc", "limit"),
        ("limit=0", "limit"),
        ("limit=-5", "limit"),
        ("limit=1.5", "limit"),
        ("offset=abc", "offset"),
        ("offset=-1", "offset"),
        ("offset=" + "9" * 5000, "offset"),
    ],
)
def test_a_bad_page_value_is_a_400_naming_it_on_every_list(
    as_bob: APIClient, url: str, query: str, field: str
) -> None:
    message = _field_error(as_bob.get(f"{url}?{query}"), field)
    assert message.startswith("Must be a whole number from")


def test_good_page_values_still_page(as_bob: APIClient) -> None:
    page = as_bob.get("/api/incidents/", {"limit": "1000", "offset": "0"})
    assert page.status_code == 200
    assert as_bob.get("/api/incidents/?limit=&offset=").status_code == 200


def test_the_schema_documents_the_page_bounds_on_every_list(as_bob: APIClient) -> None:
    schema = as_bob.get("/api/schema/?format=json").json()
    for url in LISTS:
        parameters = {p["name"]: p for p in schema["paths"][url]["get"]["parameters"]}
        assert parameters["limit"]["schema"]["minimum"] == 1, url
        assert parameters["offset"]["schema"]["minimum"] == 0, url
    single = schema["paths"]["/api/incidents/search/"]["get"]["parameters"]
    assert "offset" not in {p["name"] for p in single}


def test_an_empty_multipart_report_says_what_is_missing(api_client: APIClient, alice: User) -> None:
    api_client.force_login(alice)
    for content_type, body in [
        ("multipart/form-data; boundary=xyz", b""),
        ("multipart/form-data", b""),
        ("multipart/form-data; boundary=", b""),
        ("multipart/form-data; boundary=xyz", b"--xyz--\r\n"),
    ]:
        response = api_client.generic("POST", "/api/incident", body, content_type=content_type)
        assert response.status_code == 400, content_type
        error = response.json()["error"]
        assert error["message"] == "Describe the incident, or attach a screenshot.", content_type
        assert error["fields"] == {"text": ["required"]}


def test_a_request_refused_before_any_view_answers_in_the_error_body(
    api_client: APIClient, alice: User, bob: User, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    api_client.force_login(alice)
    body = "&".join(f"f{i}=x" for i in range(20))
    form = "application/x-www-form-urlencoded"
    response = api_client.generic("POST", "/api/incident", body, content_type=form)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in response.json()["error"]["message"]
    # A form where the API reads JSON (a PATCH form, parsed inside DRF, was a 500).
    example = GoldenExampleFactory(question="q", answer="a")
    api_client.force_login(bob)
    url = f"/api/golden-examples/{example.pk}/"
    patch = api_client.generic("PATCH", url, body, content_type=form)
    assert patch.status_code == 415
    assert patch.json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/datasets/", {"name": "Payments", "kind": "incidents", "activte": True}, "activte"),
        ("/api/golden-examples/", {"question": "q", "answer": "a", "sorce": "x"}, "sorce"),
        ("/api/datasets/", {"name": "Pay\x01ments", "kind": "incidents"}, "name"),
        ("/api/golden-examples/", {"question": "q", "answer": ["a", "\x1b[31m"]}, "answer"),
        ("/api/datasets/", {"name": 0, "kind": "incidents"}, "name"),
        ("/api/incidents/", {"version": "1", "incident_id": "INC-2025-01-02-001"}, "version"),
        ("/api/incidents/", {"incident_id": "INC-2025-01-02-001", "tags": [7]}, "tags"),
    ],
)
def test_an_unknown_field_a_control_character_or_a_wrong_type_is_a_400_naming_it(
    as_bob: APIClient, url: str, body: dict[str, Any], field: str
) -> None:
    _field_error(as_bob.post(url, body, format="json"), field)


def test_tabs_and_newlines_in_a_json_body_are_still_text(as_bob: APIClient) -> None:
    body = {"question": "why\tnot?", "answer": "line one\r\nline two"}
    assert as_bob.post("/api/golden-examples/", body, format="json").status_code == 201


def test_the_schema_says_request_bodies_take_no_unknown_field_and_no_control_character(
    as_bob: APIClient,
) -> None:
    schema = as_bob.get("/api/schema/?format=json").json()
    body = schema["components"]["schemas"]["DatasetCreateRequest"]
    assert body["additionalProperties"] is False
    assert body["properties"]["name"]["pattern"].startswith("^[^\\x00-")
    incident = schema["components"]["schemas"]["IncidentCreateRequest"]
    assert "pattern" in incident["properties"]["tags"]["items"]
    parameters = schema["paths"]["/api/incidents/{incident_id}/"]["get"]["parameters"]
    by_name = {p["name"]: p["schema"] for p in parameters}
    assert "pattern" in by_name["incident_id"]
    assert by_name["version"]["minimum"] == 1
    listing = schema["paths"]["/api/incidents/"]["get"]["parameters"]
    empty_allowed = {p["name"] for p in listing if p.get("allowEmptyValue")}
    assert {"version", "occurred_after", "repeat", "limit", "offset"} <= empty_allowed
    assert "format" not in schema["components"]["schemas"]["Incident"]["properties"]["source_url"]


def test_allow_names_every_method_of_the_path_whichever_view_answers(
    as_bob: APIClient, bob: User
) -> None:
    conversation = as_bob.post("/api/chat/", {"message": "hello"}, format="json").json()
    url = f"/api/conversations/{conversation['conversation_id']}/"
    for response in (as_bob.options(url), as_bob.get(url), as_bob.put(url, {}, format="json")):
        assert response["Allow"] == "GET, PATCH, DELETE, HEAD, OPTIONS", response.status_code


def test_a_patch_without_a_title_leaves_the_conversation_as_it_is(as_bob: APIClient) -> None:
    conversation = as_bob.post("/api/chat/", {"message": "hello"}, format="json").json()
    url = f"/api/conversations/{conversation['conversation_id']}/"
    title = as_bob.get(url).json()["title"]
    response = as_bob.patch(url, {}, format="json")
    assert response.status_code == 200
    assert response.json()["title"] == title
    assert as_bob.patch(url, {"title": "PayU 403s"}, format="json").json()["title"] == "PayU 403s"


def test_feedback_on_a_question_is_not_found_and_answers_without_feedback_are_on_schema(
    as_bob: APIClient,
) -> None:
    conversation = as_bob.post("/api/chat/", {"message": "hello"}, format="json").json()
    url = f"/api/conversations/{conversation['conversation_id']}/"
    question, answer = as_bob.get(url).json()["messages"][0], conversation["message_id"]
    refused = as_bob.post(f"/api/messages/{question['id']}/feedback/", {"feedback": "up"})
    assert refused.status_code == 404
    assert "not an answer" in refused.json()["error"]["message"]
    assert as_bob.post(f"/api/messages/{answer}/feedback/", {"feedback": "up"}).status_code == 200
    schema = as_bob.get("/api/schema/?format=json").json()
    feedback = schema["components"]["schemas"]["Message"]["properties"]["feedback"]
    allowed = [
        schema["components"]["schemas"][ref["$ref"].split("/")[-1]] for ref in feedback["oneOf"]
    ]
    assert "" in [value for kind in allowed for value in kind["enum"]]


def test_a_second_golden_example_with_the_same_question_is_a_conflict(as_bob: APIClient) -> None:
    first = as_bob.post("/api/golden-examples/", {"question": "q", "answer": "a"}, format="json")
    again = as_bob.post("/api/golden-examples/", {"question": "q", "answer": "b"}, format="json")
    assert again.status_code == 409
    assert str(first.json()["id"]) in again.json()["error"]["message"]


@pytest.mark.parametrize("value", [0, 1, "yes", "on", "True"])
def test_a_boolean_field_takes_true_or_false_only(as_bob: APIClient, value: object) -> None:
    body = {"question": "q", "answer": "a", "is_active": value}
    _field_error(as_bob.post("/api/golden-examples/", body, format="json"), "is_active")


@pytest.mark.parametrize("address", ["javascript:alert(1)", "ftp://x", "http://a b", "a:b"])
def test_a_source_address_is_http_or_https(as_bob: APIClient, address: str) -> None:
    version = DatasetVersionFactory()
    body = {"version": version.pk, "incident_id": "INC-2025-01-02-001", "title": "t"}
    response = as_bob.post("/api/incidents/", {**body, "source_url": address}, format="json")
    _field_error(response, "source_url")
