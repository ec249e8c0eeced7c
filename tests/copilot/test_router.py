"""The offline engine's routing decisions."""

import datetime as dt

import pytest

from copilot.chat_models.offline.follow_ups import superlative
from copilot.chat_models.offline.router import (
    ConversationState,
    Remembered,
    plan,
    route,
)
from copilot.chat_models.offline.routes import DEFAULT_LIMITS, Route
from copilot.chat_models.offline.state import RememberedDocument
from incidents import query_parsing as qp

CATALOG = [
    qp.ApplicationEntry.of("PayU Core", "PayU"),
    qp.ApplicationEntry.of("Settlement & Reporting", "PayU"),
    qp.ApplicationEntry.of("GitHub Codespaces", "GitHub"),
]
TODAY = dt.date(2026, 1, 10)


@pytest.mark.parametrize(
    ("question", "tool", "arguments"),
    [
        ("What caused INC\u20112025\u201108\u201124\u2011001?", "lookup_incident_by_id",
         {"incident_id": "INC-2025-08-24-001"}),
        ("Is there a runbook for rotating API keys?", "search_knowledge",
         {"query": "Is there a runbook for rotating API keys?", "limit": 10,
          "type_filter": "runbook"}),
        ("Known issue with secret caches?", "search_knowledge",
         {"query": "Known issue with secret caches?", "limit": 10, "type_filter": "known_issue"}),
        # Other names for the same kinds of document.
        ("queue consumers stall after the broker upgrade, is this a known thing?",
         "search_knowledge",
         {"query": "queue consumers stall after the broker upgrade, is this a known thing?",
          "limit": 10, "type_filter": "known_issue"}),
        ("retro on the payment gateway outages, any recurring themes?", "search_knowledge",
         {"query": "retro on the payment gateway outages, any recurring themes?", "limit": 10,
          "type_filter": "postmortem"}),
        ("what went wrong in our review of the settlement outages? common threads?",
         "search_knowledge",
         {"query": "what went wrong in our review of the settlement outages? common threads?",
          "limit": 10, "type_filter": "postmortem"}),
        # Getting ready for something, or what to beware of, is what documents say.
        ("PayU Core key rotation coming up, anything to watch for?", "search_knowledge",
         {"query": "PayU Core key rotation coming up, anything to watch for?", "limit": 10}),
        ("we're upgrading the broker next week, any gotchas?", "search_knowledge",
         {"query": "we're upgrading the broker next week, any gotchas?", "limit": 10}),
        ("what's the safest way to fail over the settlement database", "search_knowledge",
         {"query": "what's the safest way to fail over the settlement database", "limit": 10}),
        # A service the user names is a filter of the documents.
        ("runbooks for the ledger service", "search_knowledge",
         {"query": "runbooks for the ledger service", "limit": 10, "type_filter": "runbook",
          "service_filter": ["ledger"]}),
        # A label before a colon is not a service filter when a pronoun follows it.
        ("billing service: we retry forever on 429s, is that a known problem?",
         "search_knowledge",
         {"query": "billing service: we retry forever on 429s, is that a known problem?",
          "limit": 10, "type_filter": "known_issue"}),
        ("lessons learned from big settlement outages", "search_knowledge",
         {"query": "lessons learned from big settlement outages", "limit": 10}),
        # Whether behaviour is known, and why things happen in general...
        ("consumers disconnect every 15 minutes after the upgrade, is that expected?",
         "search_knowledge",
         {"query": "consumers disconnect every 15 minutes after the upgrade, is that expected?",
          "limit": 10, "type_filter": "known_issue"}),
        ("why do our settlement ids skip numbers after a failover", "search_knowledge",
         {"query": "why do our settlement ids skip numbers after a failover", "limit": 10}),
        # ...but "why did" asks about one event.
        ("why did merchants get 403s after we rotated keys?",
         "search_similar_incidents",
         {"query": "why did merchants get 403s after we rotated keys?", "limit": 5}),
        # A listing asks for the set, not its first page, unless it gives a number.
        ("What broke in the last 2 weeks?", "get_recent_incidents", {"days": 14, "limit": 25}),
        ("what broke in the last 2 weeks, latest 3", "get_recent_incidents",
         {"days": 14, "limit": 3}),
        ("last 5 incidents on PayU Core", "get_incidents_by_application",
         {"app_name": "PayU Core", "limit": 5}),
        # An application's incidents by date: the listing, of that application only...
        ("PayU Core incidents in the last 30 days", "get_recent_incidents",
         {"days": 30, "limit": 25, "app_name": "PayU Core"}),
        # The issue's own case: the window is a filter, the subject is kept as the query.
        ("PayU Core timeouts in the last 90 days", "search_similar_incidents",
         {"query": "PayU Core timeouts in the last 90 days", "limit": 5}),
        ("Show me all incidents that affected GitHub Codespaces.", "get_incidents_by_application",
         {"app_name": "GitHub Codespaces", "limit": 25}),
        ("settlement & reporting", "get_incidents_by_application",
         {"app_name": "Settlement & Reporting", "limit": 25}),
        ("Merchants get 403 after we rotated keys", "search_similar_incidents",
         {"query": "Merchants get 403 after we rotated keys", "limit": 5}),
    ],
)  # fmt: skip
def test_questions_are_routed_to_the_right_tool(question, tool, arguments) -> None:
    decision = route(question, catalog=CATALOG, today=TODAY)
    assert (decision.tool, decision.arguments) == (tool, arguments)


@pytest.mark.parametrize(
    "question",
    [
        "x509 errors on internal service-to-service calls since midnight, what now?",
        "any doc on the affected service restarts during a failover?",
        "docs about the upstream service timing out again, what's the standard response?",
        "any runbook on the mesh service-level objectives being breached?",
    ],
)
def test_words_saying_which_service_in_the_story_filter_no_documents(question: str) -> None:
    decision = route(question, catalog=CATALOG, today=TODAY)
    assert decision.tool == "search_knowledge"
    assert "service_filter" not in decision.arguments


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # A kind named outright wins over one inferred from how the question asks.
        ("pods drain slowly after the upgrade, is that expected? what does the architecture "
         "note say about drain timeouts", "architecture"),
        ("workers stop at midnight, is that normal? anything in the runbook?", "runbook"),
        ("anything in the arch docs about cell boundaries?", "architecture"),
        ("is there a design doc for the ledger's failover?", "architecture"),
        # Inferred alone, it still is one.
        ("consumers disconnect every 15 minutes, is that expected?", "known_issue"),
        ("is this a known thing with the broker?", "known_issue"),
    ],
)  # fmt: skip
def test_the_kind_of_document_named_outright_filters_the_search(question: str, kind: str) -> None:
    decision = route(question, catalog=CATALOG, today=TODAY)
    assert (decision.tool, decision.arguments.get("type_filter")) == ("search_knowledge", kind)


@pytest.mark.parametrize(
    ("question", "tool", "kind"),
    [
        # A kind of document in the story, or what a retro needs, is no request for one...
        ("someone fat-fingered a runbook command and half the fleet rebooted, pull up that "
         "incident", "search_similar_incidents", None),
        ("quick one for the retro: did we ever lose DNS for an hour after a registrar change?",
         "search_similar_incidents", None),
        # ...but asked for, it still is.
        ("runbook steps for failing over the ledger?", "search_knowledge", "runbook"),
        ("any runbook for the playbook command that reboots hosts?", "search_knowledge", "runbook"),
        ("is there a retro for the checkout outage?", "search_knowledge", "postmortem"),
    ],
)  # fmt: skip
def test_a_document_in_the_story_is_not_asked_for(question: str, tool: str, kind: str) -> None:
    decision = route(question, catalog=CATALOG, today=TODAY)
    assert (decision.tool, decision.arguments.get("type_filter")) == (tool, kind)


# What the incidents are about, as `incident_topic_words` reads it from the data.
TOPICS = frozenset(
    ["checkout", "latency", "timeouts", "dns", "database", "pool", "settlement", "report"]
)


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # However the asker puts it, a window with no topic is a plain listing...
        ("anything blow up this week?", "get_recent_incidents"),
        ("what fell over since Monday", "get_recent_incidents"),
        ("anything noteworthy in the past couple of weeks", "get_recent_incidents"),
        ("what's been going on lately", "get_recent_incidents"),
        # A calendar period still under way is a listing up to today.
        (f"what broke in {TODAY.year}?", "get_recent_incidents"),
        # ...and a window with one is a search filtered by the window.
        ("dns problems since Monday", "search_similar_incidents"),
        ("checkout timeouts in the past couple of weeks", "search_similar_incidents"),
    ],
)
def test_a_window_without_a_topic_is_a_listing(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY, topics=TOPICS).tool == tool


@pytest.mark.parametrize(
    "question",
    [
        # How it reached us or was written down is no topic, even where incident
        # titles use the word ("logged", "disruptions")...
        "what did on-call get paged for in the last 45 days?",
        "what's been logged over the past 45 days",
        "any disruptions or blips in the last 60 days",
        # ...nor is an everyday word that a catalog name lists in passing.
        "alerts that fired in the last week",
    ],
)
def test_words_of_how_an_incident_reached_us_keep_a_window_a_listing(question: str) -> None:
    catalog = [*CATALOG, qp.ApplicationEntry.of("Datadog US region (web, API, alerts, APM)",
                                                "Datadog"),
               qp.ApplicationEntry.of("incident.io (on-call notifications, status pages)",
                                      "incident.io")]  # fmt: skip
    topics = TOPICS | {"logged", "disruptions", "alerts", "call"}
    assert route(question, catalog=catalog, today=TODAY, topics=topics).tool == (
        "get_recent_incidents"
    )


FOCUS = ConversationState(
    (
        Remembered("INC-2025-10-02-001", "Checkout latency from exhausted pool",
                   "Checkout Gateway (PayU Core)", "2025-10-02", "slow query pool postgres"),
        Remembered("INC-2025-09-01-001", "Settlement report missing rows",
                   "Settlement & Reporting", "2025-09-01", "timezone bug mandrill export"),
    ),
    "Checkout is slow",
)  # fmt: skip


FIRST = [("lookup_incident_by_id", {"incident_id": "INC-2025-10-02-001"})]
SECOND = [("lookup_incident_by_id", {"incident_id": "INC-2025-09-01-001"})]


def plan_of(question: str, state: ConversationState = FOCUS) -> list[tuple[str, dict]]:
    return [
        (r.tool, r.arguments) for r in plan(question, state=state, catalog=CATALOG, today=TODAY)
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What was the mitigation?", FIRST),
        ("How long did it last?", FIRST),
        ("What was the root cause in the second one?", SECOND),
        ("How did the settlement one get resolved?", SECOND),
        ("And the Mandrill one?", SECOND),
        # Pointed at by a demonstrative, as people do in chat.
        ("that settlement one, what time did it start", SECOND),
        ("this settlement thing - who was accountable?", SECOND),
        # ...but only by a name a shown incident carries.
        ("this kind of thing, how long did it last?", FIRST),
        # How much or which part of the same incident names none: "the full outage".
        ("how long was the full outage?", FIRST),
        ("when did the whole incident end?", FIRST),
        # Pointed at by its date, or by what happened in it.
        ("the September 2025 one: how long did it last?", SECOND),
        ("the second one, september 2025 - what kicked it off?", SECOND),
        ("the one where the report lost rows — when did it start?", SECOND),
        # The pointer comes first; an ordinal in the ask after it is a part of that
        # incident ("the second degradation"), not the second item of the list.
        ("the October 2025 one, when did the second slowdown start?", FIRST),
        ("the settlement one: what did the first retry do?", SECOND),
        # What the incident's own write-up says is a detail of its record.
        ("the second one: what did the postmortem recommend?", SECOND),
        ("What does their write-up say caused it?", FIRST),
        ("What broke in the Redis one?",
         [("search_similar_incidents", {"query": "Redis Checkout Gateway", "limit": 5})]),
        ("Which of those were caused by a vendor?", FIRST + SECOND),
        ("Is there a runbook for this?",
         [("search_knowledge", {"query": "what to do about Checkout latency from exhausted pool",
                                "limit": 10, "type_filter": "runbook"})]),
        # A document follow-up that names its own subject searches for it too.
        ("Do we have a runbook for memory leaks like that?",
         [("search_knowledge", {"query": "what to do about memory leaks Checkout latency "
                                         "from exhausted pool",
                                "limit": 10, "type_filter": "runbook"})]),
        ("Is that a known issue with the pool?",
         [("search_knowledge", {"query": "pool Checkout latency from exhausted pool",
                                "limit": 10, "type_filter": "known_issue"})]),
        ("Did it happen again later?",
         [("search_similar_incidents",
           {"query": "latency from exhausted pool since October 2025", "limit": 6})]),
        # "Like that" somewhere else: the same search, with where.
        ("Anything similar at GitHub?", [("search_similar_incidents",
          {"query": "latency from exhausted pool github", "limit": 6})]),
        ("More like this", [("search_similar_incidents",
                             {"query": "latency from exhausted pool", "limit": 6})]),
    ],
)  # fmt: skip
def test_follow_ups_act_on_what_the_last_turn_found(question: str, expected: list) -> None:
    assert plan_of(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        # Elliptical: no pronoun, no pointer, only the detail wanted.
        "roughly how many merchants potentially affected",
        "total time to recover?",
        "was any money lost",
        # Why the story went as it did, told with its own parts.
        "why didnt the checkout pods come back once the pool was resized?",
        "how come the alerts stayed green during all that",
    ],
)
def test_a_detail_asked_without_pointing_back_is_a_follow_up(question: str) -> None:
    """After an incident was shown, a detail question that names no new subject is
    about that incident (the intent bank's "ellipsis" and "narrative" styles)."""
    assert plan_of(question) == FIRST


def test_a_name_the_detailed_one_lacks_is_looked_for_in_the_listing_before_it() -> None:
    read = Remembered(
        "INC-2020-10-17-001",
        "Scoreboard database wiped",
        "Leaderboarded",
        "2020-10-17",
        "a decision to restore from the daily backup",
    )
    travis = Remembered(
        "INC-2018-03-13-001",
        "Production database truncated by a test run",
        "Travis CI",
        "2018-03-13",
    )
    state = ConversationState((read,), "how much data did the scoreboard one lose?",
                              listed=(read, travis))  # fmt: skip
    assert plan_of("and the CI one, how long was that down?", state) == [
        ("lookup_incident_by_id", {"incident_id": "INC-2018-03-13-001"})
    ]


def test_a_name_is_looked_for_in_every_incident_the_conversation_showed() -> None:
    """ "The Azure Storage one" may be a past fix shown two turns back, and "the CI
    one" a word of the compound name "CircleCI"."""
    azure = Remembered(
        "INC-2014-11-19-001", "Azure Storage global outage", "Azure Storage", "2014-11-19"
    )
    circle = Remembered(
        "INC-2023-03-14-002",
        "CircleCI jobs stop after a version skew",
        "CircleCI job execution",
        "2023-03-14",
    )
    state = ConversationState(FOCUS.focus, "Checkout is slow", seen=(*FOCUS.focus, azure, circle))
    assert plan_of("the azure storage one - where did they post updates?", state) == [
        ("lookup_incident_by_id", {"incident_id": "INC-2014-11-19-001"})
    ]
    assert plan_of("the CI one - which component broke?", state) == [
        ("lookup_incident_by_id", {"incident_id": "INC-2023-03-14-002"})
    ]


JOBS = Remembered("INC-2020-10-09-001", "Background jobs fail after a ZooKeeper split",
                  "Background job system (Kafka)", "2020-10-09",
                  "About 10% of writes to the job service failed; clients retried.")  # fmt: skip


def test_a_question_in_the_words_of_the_record_in_focus_is_about_it() -> None:
    """No pointer, but its own words are the record's: a detail of that record,
    though the model alone leans to a listing."""
    state = ConversationState((JOBS,), "details on INC-2020-10-09-001")
    assert plan_of("what share of writes to the job service failed?", state) == [
        ("lookup_incident_by_id", {"incident_id": "INC-2020-10-09-001"})
    ]


WRAPAROUND = RememberedDocument(
    "KB-RB-006", "Runbook: PostgreSQL transaction ID wraparound protection", "runbook"
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [# Incidents asked for in words: the document is only the pointer.
     ("any incidents where that doc would have helped?",
      [("search_similar_incidents",
        {"query": "PostgreSQL transaction ID wraparound protection", "limit": 5})]),
     # An incident told by its own story: the story, not the document's subject.
     ("which outage had vacuum fall behind for days until writes stopped?",
      [("search_similar_incidents",
        {"query": "vacuum fall behind days until writes stopped", "limit": 5})]),
     # A story of the document's subject, pointed at ("that limit"): both.
     ("Did that wraparound ever break writes on a busy database for hours?",
      [("search_similar_incidents",
        {"query": "wraparound writes busy database hours PostgreSQL transaction ID "
                  "wraparound protection", "limit": 5})]),
     # Where it happened is no story: the document's subject.
     ("Did that wraparound cause a production outage somewhere?",
      [("search_similar_incidents",
        {"query": "PostgreSQL transaction ID wraparound protection", "limit": 5})]),
     # Documents asked for: documents.
     ("is there a runbook for that?",
      [("search_knowledge",
        {"query": "what to do about Checkout latency from exhausted pool", "limit": 10,
         "type_filter": "runbook"})])],
)  # fmt: skip
def test_after_a_document_incidents_asked_for_are_searched(question: str, expected: list) -> None:
    state = ConversationState(FOCUS.focus, "wraparound?", documents=(WRAPAROUND,))
    assert plan_of(question, state) == expected


def test_other_incidents_where_searches_what_they_share() -> None:
    state = ConversationState((JOBS,), "details on INC-2020-10-09-001")
    assert plan_of("any other incident where the database couldn't promote a primary?", state) == [
        ("search_similar_incidents",
         {"query": "the database couldn't promote a primary", "limit": 6})
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # The same thing at someone else is a search...
        ("had that happened to other companies before?", "search_similar_incidents"),
        ("has that bitten anyone else?", "search_similar_incidents"),
        # ...whether this one was a repeat is a field of its record...
        ("was it a repeat?", "lookup_incident_by_id"),
        # ...and "again" after getting something working is a recovery, not a recurrence.
        ("how did they get checkout running again?", "lookup_incident_by_id"),
        ("how did they get payments moving again?", "lookup_incident_by_id"),
        ("when was the pool healthy again?", "lookup_incident_by_id"),
        (
            "another outage where postgres couldn't promote a primary on its own?",
            "search_similar_incidents",
        ),
        ("was there another big one like it around then?", "search_similar_incidents"),
    ],
)
def test_elsewhere_is_searched_and_working_again_is_read(question: str, tool: str) -> None:
    assert {name for name, _ in plan_of(question)} == {tool}


@pytest.mark.parametrize(
    "question",
    [
        "Any incidents where a leap second caused CPU spikes?",  # stands alone
        "What broke in the last 2 weeks?",  # a window is a new question
        "Look up INC-2025-08-24-001",
    ],
)
def test_standalone_questions_ignore_the_conversation(question: str) -> None:
    assert plan_of(question) == plan_of(question, ConversationState())


CHECKOUT_ONLY = ConversationState((FOCUS.focus[0],), "Checkout is slow")


@pytest.mark.parametrize(
    "question", ["Settlement report missing rows", "codespaces builds hang on start"]
)
def test_naming_an_application_the_results_were_not_about_stands_alone(question: str) -> None:
    """Terse new questions read like detail questions to the model: naming another
    application, and pointing at nothing, they start afresh."""
    assert plan_of(question, CHECKOUT_ONLY) == plan_of(question, ConversationState())


def test_an_application_word_the_record_in_focus_says_is_a_detail_of_it() -> None:
    """ "Settlement" also names an application, but the record in focus says it: a
    question about that part of the incident, not a new listing."""
    settling = Remembered("INC-2025-10-02-001", "Checkout latency from exhausted pool",
                          "Checkout Gateway (PayU Core)", "2025-10-02",
                          "the settlement batch held the pool")  # fmt: skip
    state = ConversationState((settling,), "Checkout is slow")
    assert plan_of("settlement batch - how long did it hold?", state) == FIRST


def test_several_ids_are_looked_up_together() -> None:
    assert plan_of("Compare INC-2025-08-24-001 and INC\u20112025\u201109\u201101\u2011001") == [
        ("lookup_incident_by_id", {"incident_id": "INC-2025-08-24-001"}),
        ("lookup_incident_by_id", {"incident_id": "INC-2025-09-01-001"}),
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [("Which one lasted longest?", ("longest", "duration")),
     ("which incident was the most recent?", ("most recent", "date")),
     ("Which one had the broadest impact?", ("broadest", "breadth")),
     ("What was the mitigation?", None),
     ("what was the longest outage of those?", ("longest", "duration")),
     ("which of them took the longest to fix", ("longest", "duration")),
     ("which company had the biggest outage?", ("biggest", "breadth")),
     # A part of one incident, not a comparison of the incidents shown.
     ("which region stayed down longest?", None),
     ("what customer segment got hit worst?", None),
     ("which step of the restore took the longest?", None)],
)  # fmt: skip
def test_superlatives_name_what_to_compare(question: str, expected: tuple | None) -> None:
    assert superlative(question) == expected


def test_how_do_i_fix_reads_the_runbooks_and_the_past_fixes() -> None:
    question = "How do I fix HTTP 403 errors in PayU?"
    assert plan_of(question, ConversationState()) == [
        ("search_knowledge", {"query": question, "limit": 10}),
        ("search_similar_incidents", {"query": question, "limit": 3}),
    ]
    assert [t for t, _ in plan_of("How do I rotate API keys?", ConversationState())] == [
        "search_knowledge"
    ]


@pytest.mark.parametrize(
    "question",
    [
        "what set it off?",  # a detail, though the search intents alone lean to documents
        "and the first?",
        "when did it kick off?",
        "how long until things recovered?",
        "which merchants got hit?",
        "which setting caused that",
        "whose fault was it",
        "y did it happen",
    ],
)
def test_a_detail_follow_up_rereads_the_record(question: str) -> None:
    tools = [tool for tool, _ in plan_of(question)]
    assert tools and set(tools) == {"lookup_incident_by_id"}


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # A symptom closed by a plea for what to do asks for the documents...
        ("reconnect storm hammering the db after a deploy. help", "search_knowledge"),
        ("all waf nodes pegged at 100% cpu since the new ruleset. ideas?", "search_knowledge"),
        ("settlement report is missing rows again, what now?", "search_knowledge"),
        # ...whatever time it names.
        ("if someone starts announcing our prefixes tonight whats the play", "search_knowledge"),
        ("primary failed over twice since yesterday, what do we do", "search_knowledge"),
        # What to act on, typed as a search...
        ("deploy key leaked in a public gist what to rotate and revoke", "search_knowledge"),
        ("replica lag after failover which node to restart first", "search_knowledge"),
        # An ask for the first thing to check opens the question the same way.
        ("first thing to check when checkout latency spikes after a deploy", "search_knowledge"),
        # ...and one closed by "seen this?" for past incidents, or opening asking for a
        # precedent with the story after it.
        ("reconnect storm hammering the db after a deploy. seen this?", "search_similar_incidents"),
        (
            "What's the precedent for a cleanup job deleting live images? It paged through "
            "the catalog newest first and the real ones fell off the page.",
            "search_similar_incidents",
        ),
    ],
)
def test_the_closing_words_decide_between_documents_and_past_incidents(question, tool) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    "question",
    [
        # A property a system promises, or whether a setting is safe...
        "Does RabbitMQ guarantee message ordering after a consumer crash?",
        "is innodb_flush_log_at_trx_commit=2 safe for a payments database?",
        # ...or how something seen can happen at all, whatever time words it holds.
        "java service got a negative duration after the leap second, how is that even possible",
        "our cron ran twice when the clock went back tonight, how can that happen",
        # A fix or routine asked for by name, and a question typed without its mark.
        "api gateway throwing 502s after the config push. whats the drill",
        "nodes OOMing every hour since the upgrade. quick fix?",
        "redis cluster lost quorum after the network blip, is this a known thing",
    ],
)  # fmt: skip
def test_asking_how_a_system_behaves_or_what_to_do_asks_for_documents(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "search_knowledge"


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # A severity or repeat filter the listing cannot apply: the search applies it...
        ("sev2 incidents in codespaces", "search_similar_incidents"),
        ("critical outages of github codespaces", "search_similar_incidents"),
        # ...and without one the application is listed.
        ("codespaces incident history", "get_incidents_by_application"),
    ],
)
def test_an_application_with_a_severity_is_a_filtered_search(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


def test_at_all_is_not_a_request_for_the_whole_list() -> None:
    decision = route("the ledger would not start at all this morning", catalog=CATALOG, today=TODAY)
    assert decision.arguments["limit"] == DEFAULT_LIMITS[decision.tool]


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # Documentation asked for without a type is a request for documents, even
        # beside an application's name...
        ("docs about the codespaces service?", "search_knowledge"),
        ("is there a wiki page for rotating leaked tokens", "search_knowledge"),
        ("any documentation on dns rollbacks?", "search_knowledge"),
        # What was written down, asked for without a word for documents.
        ("anything written up for when someone leaks our bgp prefixes?", "search_knowledge"),
        ("do we have stuff documented for a stuck settlement export", "search_knowledge"),
        ("has anyone written down what to check when checkout pods flap?", "search_knowledge"),
        # ...while documentation in a story is not asked for.
        (
            "the docs for the client say retries are safe, yet we got double charges. seen this?",
            "search_similar_incidents",
        ),
        (
            "our wiki about failover was wrong and the replica lost writes, seen this before?",
            "search_similar_incidents",
        ),
    ],
)
def test_documentation_asked_for_without_a_type_asks_for_documents(question, tool) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # One event of an application, told apart by "the" or a describing word...
        ("the big codespaces outage", "search_similar_incidents"),
        ("codespaces 9h outage", "search_similar_incidents"),
        # ...by the day it happened, or by a word for one event.
        ("codespaces failing to start on 12 june 2025", "search_similar_incidents"),
        ("codespaces down 2025-03-04", "search_similar_incidents"),
        ("codespaces march 4th", "search_similar_incidents"),
        ("codespaces launch fiasco", "search_similar_incidents"),
        ("payu core data leak", "search_similar_incidents"),
        # ...against its incidents as a list.
        ("codespaces outages", "get_incidents_by_application"),
        ("every codespaces incident", "get_incidents_by_application"),
        ("codespaces incident history", "get_incidents_by_application"),
        ("payu core leaks", "get_incidents_by_application"),
    ],
)
def test_one_event_of_an_application_is_searched_not_listed(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    "question",
    ["what failed in the last 2 weeks", "were there any user-facing errors in the last 30 days",
     "list all production incidents from the past 60 days"],
)  # fmt: skip
def test_how_something_went_wrong_is_not_a_topic_of_a_window(question: str) -> None:
    topics = TOPICS | {"failed", "errors", "production", "user"}  # title words of any corpus
    assert route(question, catalog=CATALOG, today=TODAY, topics=topics).tool == (
        "get_recent_incidents"
    )


def test_tags_the_user_names_become_the_knowledge_searchs_tag_filter() -> None:
    decision = route("runbooks tagged kafka", catalog=CATALOG, today=TODAY)
    assert decision.tool == "search_knowledge"
    assert decision.arguments["tag_filter"] == ["kafka"]
    assert decision.arguments["type_filter"] == "runbook"
    several = route("any docs tagged 'dns' or 'ttl'?", catalog=CATALOG, today=TODAY)
    assert several.arguments.get("tag_filter") == ["dns", "ttl"]


def test_a_symptom_in_an_application_is_searched_even_in_generic_words() -> None:
    # "errors" is no topic for a time window, but beside an application it is what
    # to search for: this is not a listing of the application's incidents.
    question = "Have we seen HTTP 403 errors in PayU Core before?"
    assert route(question, catalog=CATALOG, today=TODAY).tool == "search_similar_incidents"


@pytest.mark.parametrize(
    "question",
    [
        # The vendor said apart from the product, in brackets or after it.
        "codespaces problems (github side)",
        "settlement reporting incidents, payu's end",
        # How much of the history is wanted, said in words of its own.
        "codespaces, every incident we've got",
        "settlement & reporting full list",
        "payu core issues over the years",
    ],
)
def test_an_application_said_in_pieces_or_with_how_much_is_a_listing(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "get_incidents_by_application"


LISTED = ConversationState(
    (
        Remembered("INC-2023-02-10-001", "Mirror sync stalls on large packages", "Pkg mirror",
                   "2023-02-10", "sync stalled for six hours"),
        Remembered("INC-2024-06-02-001", "Package uploads rejected by a bad signature check",
                   "Pkg mirror", "2024-06-02", "a release changed how signatures were verified"),
        Remembered("INC-2021-09-30-001", "Mirror DNS lapses after registrar change", "Pkg mirror",
                   "2021-09-30", "nameservers changed"),
    ),
    "pkg mirror outages",
)  # fmt: skip


@pytest.mark.parametrize(
    ("question", "incident_id"),
    [
        # By date, whatever order the listing showed them in (not a time window)...
        ("most recent one — what broke?", "INC-2024-06-02-001"),
        ("and the oldest of those, how long was it down?", "INC-2021-09-30-001"),
        # ...and by words of its record, in another order or inflection.
        ("the rejected uploads one, what changed?", "INC-2024-06-02-001"),
        ("the mirror dns lapses one — cause?", "INC-2021-09-30-001"),
    ],
)
def test_a_listed_incident_is_picked_by_date_or_by_its_words(question, incident_id) -> None:
    assert plan_of(question, LISTED) == [("lookup_incident_by_id", {"incident_id": incident_id})]


@pytest.mark.parametrize(
    "question",
    [
        # A fix asked for with a describing word...
        "payment webhooks retry forever after the cert rotation. known fix?",
        # ...what to do, asked in the last clause as how to do it...
        "cache hit rate fell after we resized the cluster and the db can't keep up, how to "
        "get out of this",
        # ...or as what our process says.
        "the email vendor is down, not our bug - do we still declare an incident?",
        "checkout errors at 2% after the release, should we roll back?",
    ],
)
def test_the_last_clause_asking_what_we_do_asks_for_documents(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "search_knowledge"


@pytest.mark.parametrize(
    ("question", "doc_type"),
    [
        # Whether a behaviour is known, asked in other words...
        ("ledger writes stall every night at 2am, is that a thing?", "known_issue"),
        ("managed redis refuses writes at 25GB, hidden cap?", "known_issue"),
        # ...what several incidents share, which reviews draw out...
        ("payment gateway outages keep coming back - what's the pattern", "postmortem"),
        ("anything in common across the settlement outages? recurring causes?", "postmortem"),
        # ...a symptom followed by only "why", and the ask put first.
        ("broker drops consumers after exactly 30 minutes, why", None),
        ("what do we check first when settlement files arrive empty", None),
    ],
)
def test_known_behaviour_patterns_and_bare_whys_ask_for_documents(question, doc_type) -> None:
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert decided.tool == "search_knowledge"
    assert decided.arguments.get("type_filter") == doc_type


@pytest.mark.parametrize(
    ("question", "doc_type"),
    [
        # A search-box request that opens with the kind of document, whatever it names...
        ("architecture of the settlement & reporting pipeline", "architecture"),
        ("runbooks for payu core", "runbook"),
        # ...and how a named system works now, not what happened to it.
        ("how does settlement & reporting retry failed exports?", None),
    ],
)
def test_a_document_kind_first_or_how_a_system_works_asks_for_documents(question, doc_type):
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert decided.tool == "search_knowledge"
    assert decided.arguments.get("type_filter") == doc_type


def test_a_terse_request_for_a_kind_of_document_is_not_a_greeting() -> None:
    assert plan_of("list postmortems", ConversationState())[0][0] == "search_knowledge"


def test_a_name_with_only_listing_words_lists_the_application() -> None:
    """ "gce persistent disk outages" reads like a symptom to the model, but besides
    the name there is nothing a search could rank by."""
    catalog = [*CATALOG, qp.ApplicationEntry.of("Google Compute Engine Persistent Disk "
                                                "europe-west1-b", "Google Cloud")]  # fmt: skip
    decision = route("GCE persistent disk outages", catalog=catalog, today=TODAY)
    assert decision.tool == "get_incidents_by_application"
    searched = route("GCE persistent disk latency after snapshots", catalog=catalog, today=TODAY)
    assert searched.tool == "search_similar_incidents"


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # Whether such a thing ever happened is asked of past incidents, however
        # close a document on the topic reads...
        ("Has a connection pool setting ever dropped settlement batches during a failover?",
         "search_similar_incidents"),
        ("Any outages where a config push filled the disks on every node?",
         "search_similar_incidents"),
        ("Was there ever an incident where the runbook's rollback made things worse?",
         "search_similar_incidents"),
        ("have we ever had the cache serve another customer's data after a deploy?",
         "search_similar_incidents"),
        # ...unless the document is what is asked for.
        ("Has anyone ever written a runbook for rolling back a schema migration?",
         "search_knowledge"),
        ("Have we ever had a known-issue doc for cache poisoning?", "search_knowledge"),
    ],
)  # fmt: skip
def test_asking_whether_it_ever_happened_asks_for_past_incidents(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # What was seen, and nothing asked: matched against past incidents...
        ("java workers crash looping on one malformed kafka record, NPE in the deserializer",
         "search_similar_incidents"),
        ("checkout pods restarting every few minutes since the deploy, memory climbing steadily",
         "search_similar_incidents"),
        ("Replication lag grew to hours after we enabled the new audit trigger on the orders table",
         "search_similar_incidents"),
        ("The nightly export stopped writing files and the disk on the worker filled up",
         "search_similar_incidents"),
        # ...while a statement that asks, however it is typed, still asks for documents.
        ("whats the play when replication lag keeps growing after a deploy", "search_knowledge"),
        ("need the steps to rotate the signing key before it expires", "search_knowledge"),
        ("failover procedure for the payments database cluster", "search_knowledge"),
    ],
)  # fmt: skip
def test_a_statement_of_what_was_seen_asks_for_past_incidents(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    "question",
    [
        # The request, then what the asker is running: the document is still asked for.
        "do we have a known issue writeup on rabbitmq quorum queues? we're on 3.12",
        "Any runbook for a stuck schema migration? The table is 2 TB and replicas are lagging.",
    ],
)
def test_a_document_asked_for_before_a_sentence_of_context_is_still_asked_for(question) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "search_knowledge"


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # How it is prevented is what architecture notes and runbooks say...
        ("What should we have had in place so one bad feature flag could not reach every region?",
         "search_knowledge"),
        ("how could we avoid a cert rotation taking down every service at once?",
         "search_knowledge"),
        # ...while how they prevented it is part of an incident's story.
        ("Which outage did they only stop by pulling the power, and how did they prevent a repeat?",
         "search_similar_incidents"),
    ],
)  # fmt: skip
def test_asking_how_it_is_prevented_asks_for_documents(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    "question",
    [
        # What the list is for, or how often it failed, is nothing to search for.
        "need the settlement & reporting incidents for the quarterly review",
        "settlement & reporting - how many times has it gone down?",
    ],
)
def test_a_listing_for_a_purpose_or_counting_failures_is_a_listing(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "get_incidents_by_application"


# The same two incidents shown newest first and oldest first.
NEWEST_FIRST = FOCUS
OLDEST_FIRST = ConversationState(tuple(reversed(FOCUS.focus)), "Checkout is slow")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # Between two, a comparative points by date (not a time window)...
        ("What caused the older one?", SECOND),
        ("and the earlier one, what went wrong there?", SECOND),
        ("How was the newer one fixed?", FIRST),
        ("the more recent one — how long was it down?", FIRST),
    ],
)
def test_the_older_or_newer_of_two_is_picked_by_date(question: str, expected: list) -> None:
    assert plan_of(question, NEWEST_FIRST) == expected
    assert plan_of(question, OLDEST_FIRST) == expected


@pytest.mark.parametrize(
    "question",
    [
        "What other times has that pool run dry?",
        "were there other occasions when checkout slowed down like that?",
        "Any other times a slow query took the pool out?",
    ],
)
def test_other_times_are_searched_for(question: str) -> None:
    assert [tool for tool, _ in plan_of(question)] == ["search_similar_incidents"]


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # Whether it was itself a repeat looks back: its record's field...
        ("Was that one flagged as a recurrence of something earlier?", "lookup_incident_by_id"),
        ("Is it recorded as a recurrence?", "lookup_incident_by_id"),
        ("was this a repeat of a previous outage?", "lookup_incident_by_id"),
        # ...whether it happened again looks forward: a search.
        ("Did it recur later?", "search_similar_incidents"),
    ],
)
def test_whether_it_was_a_repeat_is_read_from_its_record(question: str, tool: str) -> None:
    assert [t for t, _ in plan_of(question)][:1] == [tool]


@pytest.mark.parametrize(
    "question",
    [
        "We pointed the health check at the database and a short blip pulled every instance "
        "out of rotation at once. Do we have a precedent?",
        "A safe config rollout still took down every region. Precedent?",
        "A cleanup job deleted base images that builds still used. Any prior incidents?",
        "The batch scheduler double-booked every worker after the clock change. Seen this before?",
    ],
)
def test_a_story_asking_for_a_precedent_is_matched_against_past_incidents(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "search_similar_incidents"


@pytest.mark.parametrize(
    ("question", "limit"),
    [
        # "Every" and "all" in the story say how much broke: the closest few...
        ("every client reconnected at once and all the session hosts ran out of memory", 5),
        # ...asking for all the incidents asks for more.
        ("all the incidents where a certificate expired", 25),
        ("list every outage caused by a certificate expiry", 25),
    ],
)
def test_a_search_lists_more_only_when_all_incidents_are_asked_for(
    question: str, limit: int
) -> None:
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert (decided.tool, decided.arguments["limit"]) == ("search_similar_incidents", limit)


@pytest.mark.parametrize(
    ("question", "query"),
    [
        # A document follow-up that says what it is about is searched by its own words:
        # the incident's title would outweigh them...
        (
            "what's our checklist for telling customers when the status page is down like that?",
            "what to do about telling customers status page down",
        ),
        # ...one that only points ("a note that covers it") by the incident's topic.
        ("Is there a known-issue note that covers it?", "Checkout latency from exhausted pool"),
        # ...and one whose own words point at it ("the setting behind it") by both.
        (
            "Is there a doc on the setting behind it that I can send the customer?",
            "setting behind send customer Checkout latency from exhausted pool",
        ),
    ],
)
def test_a_document_follow_up_searches_its_own_subject_when_it_says_one(
    question: str, query: str
) -> None:
    (tool, arguments), *_ = plan_of(question)
    assert (tool, arguments["query"]) == ("search_knowledge", query)


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # The document pointed at is what is asked to have happened...
        ("did that known issue ever bite anyone?", "search_similar_incidents"),
        ("has the problem in that doc hit anyone in production?", "search_similar_incidents"),
        ("has what that runbook describes ever happened for real?", "search_similar_incidents"),
        # ...while a document asked for is a document.
        ("is there a runbook for it too?", "search_knowledge"),
        ("any known-issue doc for that?", "search_knowledge"),
    ],
)
def test_a_document_pointed_at_asks_whether_it_happened(question: str, tool: str) -> None:
    state = ConversationState(FOCUS.focus, "wraparound?", documents=(WRAPAROUND,))
    assert [name for name, _ in plan_of(question, state)][:1] == [tool]


SEQUENCES = RememberedDocument(
    "KB-KI-004", "Known issue: sequences jump after failover", "known_issue",
    ("INC-2021-01-01-001", "INC-2024-02-02-001"),
)  # fmt: skip


@pytest.mark.parametrize(
    ("question", "looked_up"),
    [
        # The incidents a document was written from are read by id...
        ("Which incidents was that write-up based on?",
         ["INC-2021-01-01-001", "INC-2024-02-02-001"]),
        ("what incident is behind it?", ["INC-2021-01-01-001", "INC-2024-02-02-001"]),
        # ...or the one of them pointed at by its year.
        ("What set off the 2024 one?", ["INC-2024-02-02-001"]),
    ],
)  # fmt: skip
def test_the_incidents_a_document_draws_on_are_looked_up(question: str, looked_up: list) -> None:
    state = ConversationState((), "sequences jumping?", documents=(SEQUENCES,))
    assert plan_of(question, state) == [
        ("lookup_incident_by_id", {"incident_id": i}) for i in looked_up
    ]


def test_whether_a_documents_subject_bit_anyone_else_is_still_searched() -> None:
    state = ConversationState((), "sequences jumping?", documents=(SEQUENCES,))
    assert [tool for tool, _ in plan_of("has it bitten anyone besides them?", state)] == [
        "search_similar_incidents"
    ]


@pytest.mark.parametrize(
    "question",
    [
        # What several incidents share is what incident reviews draw out...
        "What do the big settlement outages have in common?",
        "Which lessons did the payments team draw from its repeated pool exhaustion incidents?",
        "What ties the checkout outages together?",
        "Is there a writeup that looks across all of PayU Core's timeout incidents?",
        "Is there a review of the settlement team's reporting incidents?",
    ],
)
def test_what_several_incidents_share_asks_for_reviews(question: str) -> None:
    # Any document may say it (a runbook draws lessons too): no type filter.
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert (decided.tool, decided.arguments.get("type_filter")) == ("search_knowledge", None)


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # How a system behaves under a condition is what known issues say...
        ("Does the settlement queue fall over at very high load?", "search_knowledge"),
        ("can postgres sequences jump after a failover?", "search_knowledge"),
        # ...whether it did is a past event.
        ("Did the settlement queue fall over at very high load?", "search_similar_incidents"),
        # The written routine asked for by name closes a story too.
        ("we lost power in one hall of the datacenter, checklist?", "search_knowledge"),
    ],
)
def test_how_it_behaves_or_the_routine_asked_for_is_a_document(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    "question",
    ["What were the most recent incidents?", "What are the newest incidents?",
     "most recent outages?", "What's new in the incident log this month?"],
)  # fmt: skip
def test_the_newest_end_of_the_log_is_a_listing_by_date(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "get_recent_incidents"


def _documents_read_closer(decided: Route) -> float:
    """Evidence that favours documents: the nearest document beats the nearest incident."""
    return 0.9 if decided.tool == "search_knowledge" else 0.3


def test_what_was_seen_with_no_ask_is_matched_against_incidents_whatever_the_evidence() -> None:
    question = "go service crashing on a poison pill message even with recover in main"
    decided = route(question, catalog=CATALOG, today=TODAY, probe=_documents_read_closer)
    assert decided.tool == "search_similar_incidents"
    # Asked what to do, the same story goes to documents.
    asked = route(question + ", how do we stop it?", catalog=CATALOG, today=TODAY,
                  probe=_documents_read_closer)  # fmt: skip
    assert asked.tool == "search_knowledge"


def test_incidents_asked_for_outright_are_searched_whatever_the_evidence() -> None:
    for question in ["Find incidents about Consul.", "show me outages involving a leap second"]:
        decided = route(question, catalog=CATALOG, today=TODAY, probe=_documents_read_closer)
        assert decided.tool == "search_similar_incidents", question


def test_a_technology_asked_about_is_searched_not_the_product_naming_it_aside() -> None:
    catalog = [*CATALOG, qp.ApplicationEntry.of("Build Runners (Redis)", "Acme")]
    decided = route("Find incidents about Redis.", catalog=catalog, today=TODAY)
    assert decided.tool == "search_similar_incidents"
    # The product itself asked about is still its listing.
    listed = route("Find incidents about Build Runners.", catalog=catalog, today=TODAY)
    assert listed.tool == "get_incidents_by_application"


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # The incident's own follow-ups and lessons are in its record...
        ("Any follow-up actions?", "lookup_incident_by_id"),
        ("What lessons were learned?", "lookup_incident_by_id"),
        # What they did after it, in any order of who, what and when...
        ("what changes did they make after that?", "lookup_incident_by_id"),
        ("were they gonna do anything differently next time?", "lookup_incident_by_id"),
        ("How did the team stop it from happening again?", "lookup_incident_by_id"),
        ("what are they doing so it doesn't recur?", "lookup_incident_by_id"),
        # ...not whether they had more of it afterwards.
        ("did they have more outages like it after that?", "search_similar_incidents"),
        # Their handling, to borrow, whatever document of ours it is meant for...
        (
            "anything we could steal from how they fixed it for our checklist?",
            "lookup_incident_by_id",
        ),
        ("What can we learn from the way the team handled it?", "lookup_incident_by_id"),
        # ...what we should learn is for documents.
        ("Is there a checklist for how we should handle it?", "search_knowledge"),
        ("What lessons should we take from it for our own pools?", "search_knowledge"),
    ],
)
def test_its_follow_ups_are_read_from_its_record(question: str, tool: str) -> None:
    one = ConversationState((FOCUS.focus[0],), "details on INC-2025-10-02-001")
    assert [name for name, _ in plan_of(question, one)][:1] == [tool]


def test_a_company_its_applications_do_not_name_is_still_a_listing() -> None:
    catalog = [*CATALOG, qp.ApplicationEntry.of("Firefox add-ons (signing certificate)", "Mozilla")]
    assert route("Mozilla outages", catalog=catalog, today=TODAY).tool == (
        "get_incidents_by_application"
    )


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # A demonstrative before a word for an event points at what was shown, however
        # the model leans...
        ("Is there a design doc that explains that failure pattern?", "search_knowledge"),
        ("Did any other companies get hit by that outage?", "search_similar_incidents"),
        ("Has that same bug hit anyone since?", "search_similar_incidents"),
    ],
)
def test_that_outage_points_at_the_incident_shown(question: str, tool: str) -> None:
    (name, arguments), *_ = plan_of(question, CHECKOUT_ONLY)
    assert (name, "exhausted pool" in arguments["query"]) == (tool, True)


def test_a_relative_that_before_a_noun_points_at_nothing() -> None:
    question = "Is there a runbook that covers errors from the ledger export?"
    (name, arguments), *_ = plan_of(question, CHECKOUT_ONLY)
    assert (name, "exhausted pool" in arguments["query"]) == ("search_knowledge", False)


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # A repeat guarded against is what the record's follow-ups say...
        ("What did they change so it wouldn't happen again?", "lookup_incident_by_id"),
        ("What did they do afterwards to stop it happening again?", "lookup_incident_by_id"),
        # ...a repeat asked about is a search of later incidents.
        ("So did it happen again?", "search_similar_incidents"),
        ("Has it come back since?", "search_similar_incidents"),
    ],
)
def test_a_repeat_guarded_against_is_not_a_repeat_asked_about(question: str, tool: str) -> None:
    assert plan_of(question, CHECKOUT_ONLY)[0][0] == tool


LEDGERLY = ConversationState(
    (Remembered("INC-2024-05-05-001", "Ledgerly uploads fail when the key hits the 32-bit limit",
                "Ledgerly uploads (API)", "2024-05-05", "the id column overflowed"),),
    "uploads failing",
)  # fmt: skip


@pytest.mark.parametrize(
    "question",
    ["Has the same kind of overflow hit anyone else?", "Any others like it?", "Did it recur?"],
)
def test_others_like_it_are_searched_without_its_company(question: str) -> None:
    # The application's name in the query would keep the search to that application.
    (name, arguments), *_ = plan_of(question, LEDGERLY)
    assert (name, "Ledgerly" in arguments["query"], "32-bit" in arguments["query"]) == (
        "search_similar_incidents", False, True
    )  # fmt: skip


def test_they_in_a_search_around_it_keeps_to_its_company() -> None:
    question = "Didn't they have another big global outage shortly before that?"
    (name, arguments), *_ = plan_of(question, LEDGERLY)
    assert name == "search_similar_incidents"
    assert arguments["query"].startswith("Ledgerly another big global outage between")


@pytest.mark.parametrize(
    ("question", "incident_id"),
    [
        ("For the big outage in June 2024, what did they change?", "INC-2024-06-02-001"),
        ("Back in 2021, how long were they down?", "INC-2021-09-30-001"),
    ],
)
def test_a_month_only_one_listed_incident_falls_in_points_at_it(
    question: str, incident_id: str
) -> None:
    assert plan_of(question, LISTED) == [("lookup_incident_by_id", {"incident_id": incident_id})]


def test_incidents_asked_for_in_a_listed_month_are_a_new_listing() -> None:
    tools = [name for name, _ in plan_of("any other outages in June 2024?", LISTED)]
    assert "lookup_incident_by_id" not in tools


def test_the_earlier_one_compares_the_two_shown_first() -> None:
    # An incident, the one found shortly before it, and older search results.
    found = ConversationState(
        (*FOCUS.focus, Remembered("INC-2025-03-03-001", "Ledger stuck", "Ledger", "2025-03-03")),
        "another one before that?",
    )  # fmt: skip
    assert plan_of("What was the root cause of the earlier one?", found) == SECOND


@pytest.mark.parametrize(
    ("question", "tools"),
    [
        # Where a document's subject was met: the cases it names, read by id...
        ("Who ran into this in production?", ["lookup_incident_by_id"] * 2),
        ("Which outage was it seen in, and how long did it last?", ["lookup_incident_by_id"] * 2),
        # ...others beyond them are searched.
        ("Has anyone else run into it since?", ["search_similar_incidents"]),
    ],
)
def test_where_a_documents_subject_was_met_reads_its_cases(question: str, tools: list) -> None:
    state = ConversationState((), "sequences jumping?", documents=(SEQUENCES,))
    assert [name for name, _ in plan_of(question, state)] == tools


def test_a_place_it_happened_asks_for_incidents_of_a_documents_subject() -> None:
    state = ConversationState(FOCUS.focus, "wraparound?", documents=(WRAPAROUND,))
    (name, arguments), *_ = plan_of("Has that actually caused data loss somewhere?", state)
    assert (name, "wraparound" in arguments["query"]) == ("search_similar_incidents", True)


@pytest.mark.parametrize(
    "question",
    [
        "Can we rely on settlement ids being sequential? We saw one skip by 40 after a failover.",
        "Is it safe to assume a webhook is delivered exactly once?",
        "Are DNS TTLs guaranteed to be honoured by every resolver?",
        "could I count on checkout retries being idempotent",
    ],
)
def test_whether_a_property_can_be_relied_on_asks_for_documents(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "search_knowledge"


@pytest.mark.parametrize(
    "question",
    [
        # A story closed by asking whether we have its record...
        "Nightly job wiped the routing table our gateways read and merchants got 502s. "
        "Do we have it?",
        "The ledger export dropped a day of rows after the clocks changed. Is that one on file?",
        # ...or incidents asked for by their noun.
        "What other certificate expiry outages are on record?",
        "Which DNS incidents do we have from last year's migration?",
    ],
)
def test_asking_for_the_record_of_a_story_searches_incidents(question: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == "search_similar_incidents"


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # Whether a document's subject really happened, asked of the records...
        ("Has a pool actually run dry during a real outage in our records?",
         "search_similar_incidents"),
        ("Has the dashboard really gone blank mid-incident on record?",
         "search_similar_incidents"),
        # ...and what our guidance or policy says, asked of the documents.
        ("What does our guidance say about canaries for config pushes?", "search_knowledge"),
        ("And what does our policy say about that?", "search_knowledge"),
    ],
)  # fmt: skip
def test_records_and_guidance_after_a_document(question: str, tool: str) -> None:
    state = ConversationState(FOCUS.focus[:1], "pool?", documents=(WRAPAROUND,))
    assert plan_of(question, state)[0][0] == tool
    if tool == "search_knowledge":  # after an incident alone, too
        assert plan_of(question, CHECKOUT_ONLY)[0][0] == tool


def test_a_name_in_other_words_picks_the_listed_item_it_reads_like() -> None:
    # "crash-loop" is no word of any record; the third reads like it, clearly.
    listed = ConversationState(
        (*LISTED.focus[:2],
         Remembered("INC-2022-11-18-001", "Uploader repeatedly crashes on a poison message",
                    "Pkg mirror", "2022-11-18", "each restart read the same message")),
        "pkg mirror outages",
    )  # fmt: skip
    assert plan_of("The crash-loop one - what set it off?", listed) == [
        ("lookup_incident_by_id", {"incident_id": "INC-2022-11-18-001"})
    ]
    # A name nothing shown reads like is searched for.
    assert plan_of("And the Redis one?", listed)[0][0] == "search_similar_incidents"


def test_a_relative_that_in_a_story_after_a_document_keeps_the_story_alone() -> None:
    # "…a canary that caught…" tells the incident wanted; it does not point at the
    # document's subject, which would pull the search away from the story.
    state = ConversationState((), "wraparound?", documents=(WRAPAROUND,))
    question = "Which incident had a canary that caught the bad config but couldn't stop the push?"
    (name, arguments), *_ = plan_of(question, state)
    assert (name, "wraparound" in arguments["query"]) == ("search_similar_incidents", False)


def test_a_phrase_of_the_documents_question_points_at_their_subject() -> None:
    # "The truncate trick" echoes what the documents were asked about: the incidents
    # wanted are of their subject, not of "trick" anywhere.
    state = ConversationState(
        (),
        documents=(WRAPAROUND,),
        documents_question="postgres wraparound runbook truncate tables to free xids",
    )
    (name, arguments), *_ = plan_of("which past outage actually used the truncate trick", state)
    assert (name, "wraparound" in arguments["query"]) == ("search_similar_incidents", True)
    # A story of its own around the echoed phrase is searched alone.
    story = "Which outage ran the truncate trick on a replica that got promoted and lost writes?"
    (name, arguments), *_ = plan_of(story, state)
    assert (name, "wraparound" in arguments["query"]) == ("search_similar_incidents", False)


@pytest.mark.parametrize(
    "question",
    [
        "And what does our runbook say about catching this earlier?",
        "Is there a checklist for handling that in future?",
    ],
)
def test_this_as_the_object_of_a_verb_points_back(question: str) -> None:
    (name, arguments), *_ = plan_of(question, CHECKOUT_ONLY)
    assert (name, "exhausted pool" in arguments["query"]) == ("search_knowledge", True)


def test_other_times_of_that_thing_search_it_as_its_application_names_it() -> None:
    resolver = ConversationState(
        (Remembered("INC-2025-07-14-001", "Resolver down 62 minutes after prefixes withdrawn",
                    "Quadrant 9.9.9.9 public DNS resolver and Gateway DNS (anycast)",
                    "2025-07-14"),),
        "resolver down",
    )  # fmt: skip
    (name, arguments), *_ = plan_of("What other times has that resolver been down?", resolver)
    assert (name, arguments["query"]) == (
        "search_similar_incidents", "has Quadrant 9.9.9.9 public DNS resolver been down"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # A request made politely, as non-native speakers often write it...
        ("Kindly advise the steps for a DDoS attack. Our load balancers are seeing very many "
         "TLS handshakes and one URL gets a huge spike of requests.", "search_knowledge"),
        ("Request you to suggest the procedure, certificate on the API gateway is expired "
         "and clients are failing.", "search_knowledge"),
        # ...the last sentence opening by asking whether it happened, whatever follows...
        ("Checkout has been throwing 502s since the deploy. Has this happened somewhere "
         "before, so we can tell merchants what to expect?", "search_similar_incidents"),
        # ...and guidance asked for before whether it ever happened.
        ("Is there guidance on validating generated firewall rules, and has a bad rule ever "
         "taken down the edge?", "search_knowledge"),
    ],
)  # fmt: skip
def test_requests_in_other_words_and_their_order(question: str, tool: str) -> None:
    assert route(question, catalog=CATALOG, today=TODAY).tool == tool


@pytest.mark.parametrize(
    "question",
    [
        "Is there a known-issue doc for broker upgrades, and has that ever stalled consumers "
        "somewhere?",
        "Do we have a runbook for a full disk? Did it ever cause a real outage anywhere?",
        # Whether it happened to somebody...
        "Is there a runbook for restoring a wiped database, and has anyone ended up with "
        "duplicate users after a restore?",
        "Do we have a known issue about DNS TTLs, and did any company get burned by a long TTL?",
        # ...and a long aside before "ever".
        "Do we have a runbook for integer key exhaustion, and has a foreign key - not the "
        "primary key - ever overflowed somewhere?",
    ],
)
def test_a_document_ask_that_also_asks_if_it_happened_runs_both_searches(question: str) -> None:
    assert [(r.tool, r.reason) for r in plan(question, state=ConversationState(),
                                             catalog=CATALOG, today=TODAY)] == [
        ("search_knowledge", "knowledge"), ("search_similar_incidents", "has it happened")
    ]  # fmt: skip


def test_an_incident_shown_beside_documents_is_picked_by_what_it_broke() -> None:
    # Documents led the last answer, the incidents under them were shown too: "the one
    # that broke <its products>" reads that record, not documents' incidents afresh.
    settlement = Remembered(
        "INC-2025-09-01-001", "Settlement report and Mandrill export missing rows",
        "Settlement & Reporting", "2025-09-01", "timezone bug; checkout unaffected",
    )  # fmt: skip
    state = ConversationState((FOCUS.focus[0], settlement), "pool?", documents=(WRAPAROUND,))
    question = "the one that broke Settlement and Mandrill - did anyone lose data during it?"
    assert plan_of(question, state) == SECOND


def test_somebody_writing_a_document_is_no_ask_whether_it_happened() -> None:
    question = "Is there a runbook for cert rotation, and has anyone written a checklist for it?"
    routes = plan(question, state=ConversationState(), catalog=CATALOG, today=TODAY)
    assert [r.tool for r in routes] == ["search_knowledge"]


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # "last" as a verb before "and" is no "last a(n) d(ay)" window; "theirs" points.
        ("how long did theirs last and how did they stop it", "lookup_incident_by_id"),
        # Others of a kind, like the one shown: a search.
        ("Were there other pool exhaustion storms like that one?", "search_similar_incidents"),
        ("any more slow checkouts like this?", "search_similar_incidents"),
    ],
)
def test_last_as_a_verb_and_others_of_a_kind(question: str, tool: str) -> None:
    assert plan_of(question, CHECKOUT_ONLY)[0][0] == tool


@pytest.mark.parametrize(
    "question",
    [
        "Any runbook for something that hangs?",
        "Is there a known issue for anything that leaks?",
    ],
)
def test_a_that_clause_after_an_ing_word_points_at_nothing(question: str) -> None:
    (name, arguments), *_ = plan_of(question, CHECKOUT_ONLY)
    assert (name, "exhausted pool" in arguments["query"]) == ("search_knowledge", False)


LISTED_PRODUCTS = [
    *CATALOG,
    qp.ApplicationEntry.of("Atlas Cloud (Tracker, Wiki, Service Desk sites)", "Atlas"),
    qp.ApplicationEntry.of("Nimbus Lakehouse Storage API (EU multi-region)", "Nimbus"),
    qp.ApplicationEntry.of("Nimbus Cloud (Compute, Lakehouse, Queues)", "Nimbus"),
]


@pytest.mark.parametrize(
    "question", ["any incidents involving Queues?", "outages impacting Lakehouse"]
)
def test_how_incidents_relate_to_a_named_application_is_no_topic(question: str) -> None:
    # "involving", "impacting": how the incidents relate to the name, nothing to search.
    decided = route(question, catalog=LISTED_PRODUCTS, today=TODAY)
    assert decided.tool == "get_incidents_by_application", decided.reason


@pytest.mark.parametrize("question", ["Wiki outages", "Service Desk outages"])
def test_a_component_named_without_a_window_never_lists_the_last_week(question: str) -> None:
    decided = route(question, catalog=LISTED_PRODUCTS, today=TODAY)
    assert decided.tool != "get_recent_incidents", decided.reason


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        # An ask typed in chat's spelling is still an ask...
        ("renewed the cert on the gateway but some services still fail with the old one. "
         "wat now", "search_knowledge"),
        ("after the broker upgrade consumers keep getting dropped w/ ack timeouts, consumer "
         "count drifting to 0. whcih setting do i change", "search_knowledge"),
        # ...a setting and its value asked about as a search box would...
        ("synchronous_commit=off safe for the ledger db during failover", "search_knowledge"),
        ("sync_binlog=0 risky for payments mysql failover", "search_knowledge"),
        # ...and how it went for others is what their incidents' records say.
        ("After the failover our read replicas broke and a few seconds of payments are "
         "missing. How did others reconstruct the data?", "search_similar_incidents"),
    ],
)  # fmt: skip
def test_asks_in_chat_spelling_settings_and_how_others_fared(question: str, tool: str) -> None:
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert decided.tool == tool, decided.reason


def test_others_besides_the_one_shown_are_searched() -> None:
    question = "Any other pool outages in the history besides that one?"
    assert plan_of(question, CHECKOUT_ONLY)[0][0] == "search_similar_incidents"


@pytest.mark.parametrize(
    "question",
    [
        "Which incident of theirs is it mentioning? I want to read it.",
        "which incident is it from and what did they change",
        "Which failover does it use as an example?",
    ],
)
def test_the_incident_a_document_mentions_is_looked_up(question: str) -> None:
    state = ConversationState((), "sequences jumping?", documents=(SEQUENCES,))
    assert [name for name, _ in plan_of(question, state)] == ["lookup_incident_by_id"] * 2


def test_a_repeat_guarded_against_in_the_present_tense_is_the_records() -> None:
    question = "How long until it was back, and what are they changing so it doesn't happen again?"
    assert plan_of(question, CHECKOUT_ONLY)[0][0] == "lookup_incident_by_id"


@pytest.mark.parametrize(
    "question",
    [
        # A sentence of a longer message asks for the list...
        "Quick context: we have a vendor review on Friday. What incidents do we have for "
        "PayU Core?",
        "We may move off it and my lead wants to know how reliable it has been. Can you pull "
        "together every PayU Core incident we have on file?",
        "Give me all the Settlement & Reporting incidents, and say which lasted longest.",
        "List every PayU Core outage, and were any of them caused by a deploy?",
        # ...a pasted alert, then the ask on its own line...
        "ALERT vendor-status: PayU Core degraded (5m), host=api-3\n"
        "what past PayU Core incidents do we have on record?",
        # ...where the list is kept, and a second ask joined by "and also".
        "Could you list every PayU Core incident in the corpus?",
        "can you list all PayU Core incidents and also say which of them was the longest?",
        # A count in a learner's singular asks for them all.
        "How many outage has been for PayU Core? Give me the list please.",
        # Whether it happened before, asked after the list, is answered by it...
        "Please list the incidents of PayU Core, is it happened many times before?",
        # ...a bare name with its troubles, the story after it...
        "PayU Core issues? Please tell me which incidents is there, our checkout is "
        "getting timeouts since morning.",
        # ...after a clause of when or why...
        "A merchant escalated. Before I reply, can you list every PayU Core incident we have, "
        "and who should I loop in if it is on the vendor side?",
        # ...with its other names in parentheses...
        "Every incident for PayU Core (payu.in / the PUG gateway), and how many came down to "
        "a deploy?",
        # ...and the application may be named by its host name.
        "What incidents are recorded for payu dot com? Our merchants can't pay and they "
        "ask me whether this has happened before.",
    ],
)
def test_a_sentence_asking_for_an_applications_incidents_lists_them(question: str) -> None:
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert decided.tool == "get_incidents_by_application", decided.reason


def test_a_listing_asked_after_a_story_ignores_the_storys_dates() -> None:
    question = (
        "We moved our payments onto PayU Core last year and my director is nervous. "
        "Yesterday a few merchants complained. Can you pull every incident that affected "
        "PayU Core?"
    )
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert (decided.tool, decided.arguments.get("app_name")) == (
        "get_incidents_by_application",
        "PayU Core",
    )


def test_a_name_one_slip_from_the_titles_words_is_read_as_they_write_it() -> None:
    topics = frozenset({"payu", "core", "settlement", "reporting", "heroku"})
    decided = route("herkou incidents", catalog=[*CATALOG, qp.ApplicationEntry.of("Heroku API",
                    "Heroku")], today=TODAY, topics=topics)  # fmt: skip
    assert decided.tool == "get_incidents_by_application", decided.reason


def test_incidents_asked_first_then_a_document_are_both_searched_in_that_order() -> None:
    question = (
        "what incidents do we have where the settlement database fell over, and is there a "
        "runbook for queue backlogs?"
    )
    assert [(r.tool, r.reason) for r in plan(question, state=ConversationState(),
                                             catalog=CATALOG, today=TODAY)] == [
        ("search_similar_incidents", "similar incidents"), ("search_knowledge", "knowledge")
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        ("Have there been incidents in which a bad deploy was rolled back, but the rollback "
         "itself failed?", "search_similar_incidents"),
        ("list PayU Core incidents and say which one was a certificate problem",
         "get_incidents_by_application"),
        # One event of an application, dated, is searched for, not listed by date.
        ("My VP wants a one-liner on the PayU Core thing from July 2025. What was the impact?",
         "search_similar_incidents"),
    ],
)  # fmt: skip
def test_precedents_listings_with_a_second_ask_and_one_dated_event(
    question: str, tool: str
) -> None:
    decided = route(question, catalog=CATALOG, today=TODAY)
    assert decided.tool == tool, decided.reason


def test_a_past_detail_asked_for_a_customer_is_the_records() -> None:
    question = (
        "How much data did they lose and how long did restoring take? I need something I can "
        "tell the customer."
    )
    assert plan_of(question, CHECKOUT_ONLY)[0][0] == "lookup_incident_by_id"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # "the <name> case" names one of the results as "the <name> one" does...
        ("In the Settlement case, why could they not roll back?", SECOND),
        # ...but "the reason in that case" points at the one in focus: it names nothing.
        ("Which bug was the reason in that case?", FIRST),
    ],
)
def test_a_case_named_or_pointed_at(question: str, expected: list) -> None:
    assert plan_of(question) == expected


def test_either_of_two_kinds_of_document_filters_by_neither() -> None:
    decided = route("Is there a known issue or runbook for broker upgrades?", catalog=CATALOG,
                    today=TODAY)  # fmt: skip
    assert (decided.tool, "type_filter" in decided.arguments) == ("search_knowledge", False)


def test_documents_for_a_named_result_are_searched_by_its_title() -> None:
    question = (
        "The Settlement one sounds almost identical to ours. Is there a known issue I can "
        "link to from our write-up?"
    )
    (name, arguments), *_ = plan_of(question)
    assert (name, arguments["query"]) == ("search_knowledge", "Settlement report missing rows")


def test_a_detail_of_the_record_then_a_document_are_both_looked_up_in_that_order() -> None:
    question = "what did they change to fix it, and is there a runbook for pool exhaustion?"
    assert [name for name, _ in plan_of(question, CHECKOUT_ONLY)] == [
        "lookup_incident_by_id",
        "search_knowledge",
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # A name typed tersely without "the" names a result...
        ("settlement one fix", SECOND),
        # ...but "which one" or "first one" without it name nothing.
        ("Which one was worse?", FIRST),
        # "the other one": of the two shown, the one not in focus.
        ("the other one - what set it off?", SECOND),
    ],
)
def test_results_named_tersely_or_as_the_other_one(question: str, expected: list) -> None:
    assert plan_of(question) == expected


def test_an_incident_in_the_document_is_one_it_draws_on() -> None:
    state = ConversationState((), "sequences jumping?", documents=(SEQUENCES,))
    assert [name for name, _ in plan_of("the 2021 incident in it", state)] == [
        "lookup_incident_by_id"
    ]
    assert [name for name, _ in plan_of("sydney incident in it", state)] == [
        "lookup_incident_by_id"
    ] * 2
