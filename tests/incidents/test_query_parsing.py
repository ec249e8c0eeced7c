"""Query understanding, without a database."""

import datetime as dt

import pytest

from incidents import query_parsing as qp

TODAY = dt.date(2026, 1, 10)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("what broke last week?", dt.date(2026, 1, 3), TODAY),
        ("incidents in the past 30 days", dt.date(2025, 12, 11), TODAY),
        ("past two weeks", dt.date(2025, 12, 27), TODAY),
        ("last 48 hours", dt.date(2026, 1, 8), TODAY),
        ("anything in the last month", dt.date(2025, 12, 11), TODAY),
        ("outages in 2019", dt.date(2019, 1, 1), dt.date(2019, 12, 31)),
        ("since March 2024", dt.date(2024, 3, 1), TODAY),
        ("before 2010", None, dt.date(2009, 12, 31)),
        ("recent GitHub incidents", dt.date(2025, 12, 11), TODAY),
        # Calendar periods as people count them (found by bench/window_parsers.py).
        ("outages this month", dt.date(2026, 1, 1), TODAY),
        ("dns problems this year", dt.date(2026, 1, 1), TODAY),
        ("over the past couple of weeks", dt.date(2025, 12, 27), TODAY),
        ("in the first half of 2025", dt.date(2025, 1, 1), dt.date(2025, 6, 30)),
        ("H2 2024 incidents", dt.date(2024, 7, 1), dt.date(2024, 12, 31)),
        ("what broke over the winter", dt.date(2025, 12, 1), TODAY),
        ("after June 2025", dt.date(2025, 7, 1), TODAY),
        ("anything after 2024", dt.date(2025, 1, 1), TODAY),
        ("what failed overnight", dt.date(2026, 1, 9), TODAY),
        ("CircleCI incidents 2019\u20132023", dt.date(2019, 1, 1), dt.date(2023, 12, 31)),
        ("DNS incidents from 2021 through 2025", dt.date(2021, 1, 1), dt.date(2025, 12, 31)),
        # Units, numbers and anchors as people type them.
        ("incidents in the last 6 wks", dt.date(2025, 11, 29), TODAY),
        ("past 3 mos outages", dt.date(2025, 10, 12), TODAY),
        ("anything in the last 30d", dt.date(2025, 12, 11), TODAY),
        ("incidents, last ninety days", dt.date(2025, 10, 12), TODAY),
        # A month and its year stand for that month without "in".
        ("checkout meltdown, may 2025", dt.date(2025, 5, 1), dt.date(2025, 5, 31)),
        ("sept 2024 dns mess", dt.date(2024, 9, 1), dt.date(2024, 9, 30)),
        ("in the last half year", dt.date(2025, 7, 12), TODAY),
        ("since the 1st", dt.date(2026, 1, 1), TODAY),
        ("since the start of October", dt.date(2025, 10, 1), TODAY),
        ("since the beginning of Q4", dt.date(2025, 10, 1), TODAY),
        # A period still under way ends today: nothing has happened after it.
        ("what broke in 2026?", dt.date(2026, 1, 1), TODAY),
        ("incidents in January 2026", dt.date(2026, 1, 1), TODAY),
        ("Q1 2026 incidents", dt.date(2026, 1, 1), TODAY),
        ("from 2024 through 2026", dt.date(2024, 1, 1), TODAY),
    ],
)
def test_time_windows_are_parsed_relative_to_today(text, start, end) -> None:
    window, _ = qp.parse_time_window(text, TODAY)
    assert window is not None
    assert (window.start, window.end) == (start, end)


def test_the_weekend_is_the_last_saturday_and_sunday() -> None:
    tuesday = dt.date(2026, 1, 13)
    window, rest = qp.parse_time_window("did anything break over the weekend", tuesday)
    assert window is not None
    assert (window.start, window.end) == (dt.date(2026, 1, 10), dt.date(2026, 1, 11))
    assert rest == "did anything break"


def test_a_window_that_crosses_a_year_keeps_both_sides() -> None:
    window, rest = qp.parse_time_window("DNS incidents in the last 15 days", TODAY)
    assert window is not None and window.start == dt.date(2025, 12, 26)
    assert rest == "DNS incidents"


@pytest.mark.parametrize(
    "story",
    [
        "we rolled back an hour ago and it is still broken",
        "the cluster was provisioned a yr ago and got deleted today",
        "it recovered within 2 hours but the queue never drained",
    ],
)
def test_how_long_ago_or_how_long_in_a_story_is_not_a_window(story: str) -> None:
    window, _ = qp.parse_time_window(story.replace(" today", ""), TODAY)
    assert window is None


def test_a_bare_month_and_year_names_an_event_not_a_window() -> None:
    # "the March 2024 outage" refers to one incident; a listing says "in March 2024".
    assert qp.parse_time_window("the March 2024 outage of the API", TODAY)[0] is None


def test_no_window_leaves_the_text_alone() -> None:
    assert qp.parse_time_window("disk full on the log volume", TODAY) == (
        None,
        "disk full on the log volume",
    )


def test_repeat_severity_and_category_are_recognised() -> None:
    assert qp.parse_repeat("which incidents are flagged as repeats?") is True
    assert qp.parse_repeat("disk full") is None
    assert qp.parse_severity("any sev1 outages") == "SEV1"
    assert qp.parse_severity("P2 incidents") == "SEV2"
    assert qp.parse_severity("any sev1s this quarter?") == "SEV1"
    assert qp.parse_severity("list the P1s") == "SEV1"
    assert qp.parse_severity("critical outages in 2024") == "SEV1"
    assert qp.parse_severity("the critical path got slow") is None
    assert qp.parse_category("certificate-related incidents in the past year") == "certificate"
    assert qp.parse_category("the database was slow") is None  # not a listing
    assert qp.parse_category("config-change incidents over the past 60 days") == "config"
    assert qp.parse_category("any deploy rollout outages lately?") == "deploy"


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("Show me all incidents that affected GitHub Codespaces.", "GitHub Codespaces"),
        ("github actions outages", "github actions"),
        ("Has BigQuery had any incidents?", "BigQuery"),
        ("Anything affecting Workers KV?", "Workers KV"),
        ("Show every CircleCI incident we have on file", "CircleCI"),
        ("A deploy sent CPU to 100% on every edge server", None),
    ],
)
def test_listing_questions_yield_their_subject(question: str, subject: str | None) -> None:
    assert qp.listing_subject(question) == subject


CATALOG = [
    qp.ApplicationEntry.of("GitHub Codespaces (East US)", "GitHub"),
    qp.ApplicationEntry.of("GitHub.com (Actions, API, Codespaces)", "GitHub"),
    qp.ApplicationEntry.of("Amazon S3", "Amazon Web Services"),
    qp.ApplicationEntry.of("AWS S3 us-west-2", "Amazon Web Services"),
    qp.ApplicationEntry.of("incident.io (dashboard, Slack app)", "incident.io"),
    qp.ApplicationEntry.of("Slack real-time message servers", "Slack"),
    qp.ApplicationEntry.of("Google Compute Engine networking", "Google Cloud"),
    qp.ApplicationEntry.of("PayU Core", "PayU Demo"),
]


def test_application_names_match_in_any_case_exact_first() -> None:
    match = qp.match_applications("payu core", CATALOG)
    assert match is not None and (match.how, match.applications) == ("exact", ("PayU Core",))


def test_partial_names_match_by_words_across_application_and_company() -> None:
    match = qp.match_applications("codespaces", CATALOG)
    assert match is not None and match.how == "partial"
    assert set(match.applications) == {
        "GitHub Codespaces (East US)",
        "GitHub.com (Actions, API, Codespaces)",
    }
    actions = qp.match_applications("GitHub actions", CATALOG)
    assert actions is not None and actions.applications == (
        "GitHub.com (Actions, API, Codespaces)",
    )
    s3 = qp.match_applications("Amazon S3", CATALOG)
    assert s3 is not None and set(s3.applications) == {"Amazon S3", "AWS S3 us-west-2"}


def test_a_company_name_only_matches_that_companys_applications() -> None:
    match = qp.match_applications("slack", CATALOG)
    assert match is not None and match.applications == ("Slack real-time message servers",)


def test_abbreviations_are_expanded_and_unknown_names_do_not_match() -> None:
    match = qp.match_applications("GCE", CATALOG)
    assert match is not None and match.applications == ("Google Compute Engine networking",)
    assert qp.match_applications("mainframe", CATALOG) is None


def test_acronyms_of_the_product_inside_a_longer_catalog_name_are_understood() -> None:
    catalog = [
        qp.ApplicationEntry.of("Google Cloud Load Balancing (GFE) - Cloud Console", "Google Cloud"),
        qp.ApplicationEntry.of("Google Compute Engine networking (Network Load Balancer)"),
    ]
    gclb = qp.find_application_mention("GCLB incidents", catalog)
    assert gclb is not None and gclb.match.applications[0].startswith("Google Cloud Load")
    nlb = qp.find_application_mention("any NLB outages?", catalog)
    assert nlb is not None and nlb.match.applications == (catalog[1].application,)


def test_an_acronym_that_is_an_ordinary_word_names_nothing() -> None:
    catalog = [qp.ApplicationEntry.of("Azure Identity Router (sign-in)", "Microsoft")]
    assert qp.find_application_mention("the air conditioning in the hall failed", catalog) is None


def test_capitals_inside_a_word_count_in_an_acronym() -> None:
    catalog = [qp.ApplicationEntry.of("PayU Gateway, PayU Reports (batch)", "PayU Demo")]
    mention = qp.find_application_mention("PUG outages, full list please", catalog)
    assert mention is not None and mention.match.applications == (catalog[0].application,)


def test_a_domain_said_aloud_is_the_domain() -> None:
    mention = qp.find_application_mention("what's on file for incident dot io", CATALOG)
    assert mention is not None
    assert mention.match.applications == ("incident.io (dashboard, Slack app)",)


def test_a_name_given_as_a_slash_alias_finds_the_other_names_entries() -> None:
    catalog = [
        qp.ApplicationEntry.of("Ask Forum / Forum Network", "Forum Co"),
        qp.ApplicationEntry.of("Forum Network (search cluster)", "Forum Co"),
        qp.ApplicationEntry.of("Forum Network (search cluster)", "Other Co"),
        qp.ApplicationEntry.of("Shop EU / Shop US", "Shop Co"),
    ]
    match = qp.match_applications("ask forum", catalog)
    assert match is not None
    assert match.applications == ("Ask Forum / Forum Network", "Forum Network (search cluster)")


LOAD_BALANCERS = [
    qp.ApplicationEntry.of("Cumulus Edge Load Balancing eu-west-2", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus VM / DISK / ALB eu-west-2", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus Queue eu-west-2 (and VM, NLB, Console)", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus VM ap-south-1", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Nimbus ALB gateway", "Nimbus"),
]


@pytest.mark.parametrize(
    "question",
    [
        "cumulus load balancers (alb/nlb) - every incident",
        "cumulus load balancers / ALB / NLB outages",
        "cumulus load balancers or alb or nlb, full list",
    ],
)
def test_names_given_as_alternatives_each_count(question: str) -> None:
    """A mention that lists other names of the same company's product finds what
    each of them names, not only what all their words name together."""
    mention = qp.find_application_mention(question, LOAD_BALANCERS)
    assert mention is not None
    assert set(mention.match.applications) == {e.application for e in LOAD_BALANCERS[:3]}
    # The tool is called with the mention's subject: it must find the same.
    again = qp.match_applications(mention.subject, LOAD_BALANCERS)
    assert again is not None and again.applications == mention.match.applications


FORGE = [
    qp.ApplicationEntry.of("Forge Builds runners, Forge Spaces (and Pilot agent, Pages)", "Forge"),
    qp.ApplicationEntry.of("Forge Spaces (East)", "Forge"),
    qp.ApplicationEntry.of("Forge Pilot (completions)", "Forge"),
    qp.ApplicationEntry.of("Forge Pages", "Forge"),
    qp.ApplicationEntry.of("Forge Builds (Redis)", "Forge"),
    qp.ApplicationEntry.of("Paper Pages", "Paper Co"),
]


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("spaces and pilot incidents", {0, 1, 2}),
        ("incidents for forge spaces, pilot", {0, 1, 2}),
        ("forge builds & pages outages", {0, 3, 4}),
    ],
)
def test_products_listed_together_each_count(question: str, wanted: set[int]) -> None:
    """ "X and Y" asks for both products' incidents, not for those of the one entry
    that happens to name both; an everyday word ("pages") names a product beside
    another of its company's, and not another company's."""
    mention = qp.find_application_mention(question, FORGE)
    assert mention is not None
    assert set(mention.match.applications) == {FORGE[i].application for i in wanted}
    again = qp.match_applications(mention.subject, FORGE)
    assert again is not None and set(again.applications) == set(mention.match.applications)


VENDORS = [
    qp.ApplicationEntry.of("Dynoku web dynos", "Dynoku"),
    qp.ApplicationEntry.of("Dynoku API (deploys)", "Dynoku"),
    qp.ApplicationEntry.of("Trellis CI OS X builds", "Trellis CI"),
    qp.ApplicationEntry.of("Forge Packages (Container, npm registries)", "Forge"),
    qp.ApplicationEntry.of("npm registry", "npm"),
]


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("dynoku and trellis ci incidents", {0, 1, 2}),
        ("incidents for trellis ci / dynoku", {0, 1, 2}),
        # npm is also a company, but beside Forge's packages it is Forge's registry.
        ("forge packages (npm, container) incidents", {3}),
    ],
)
def test_a_list_naming_several_companies_finds_each_ones_products(
    question: str, wanted: set[int]
) -> None:
    mention = qp.find_application_mention(question, VENDORS)
    assert mention is not None
    assert set(mention.match.applications) == {VENDORS[i].application for i in wanted}
    again = qp.match_applications(mention.subject, VENDORS)
    assert again is not None and set(again.applications) == set(mention.match.applications)


SUITES = [
    qp.ApplicationEntry.of("Gmail, Google Calendar", "Google"),
    qp.ApplicationEntry.of("Google blob storage (Photos, Drive)", "Google"),
    qp.ApplicationEntry.of("Google Meet Livestream", "Google"),
    qp.ApplicationEntry.of("Google Cloud Service Control (Workspace APIs)", "Google Cloud"),
    qp.ApplicationEntry.of("Google Search", "Google"),
    qp.ApplicationEntry.of("Atlassian Cloud (Jira, Docs)", "Atlassian"),
    qp.ApplicationEntry.of("Slack workspace directory", "Slack"),
]


@pytest.mark.parametrize("question", ["google's workspace apps", "google workspace outages"])
def test_a_suites_name_finds_each_of_its_products(question: str) -> None:
    """No name says Gmail is part of Google Workspace; the suite's name still means
    its products (its vendor's only: Atlassian's docs are not Google's)."""
    mention = qp.find_application_mention(question, SUITES)
    assert mention is not None
    assert set(mention.match.applications) == {e.application for e in SUITES[:4]}
    again = qp.match_applications(mention.subject, SUITES)
    assert again is not None and set(again.applications) == set(mention.match.applications)


def test_a_suites_name_with_more_words_is_no_suite() -> None:
    match = qp.match_applications("slack workspace", SUITES)
    assert match is not None and match.applications == (SUITES[6].application,)


@pytest.mark.parametrize("question", ["pager bell incidents", "anything on pager bell?"])
def test_a_one_word_name_written_as_two_words_is_that_name(question: str) -> None:
    catalog = [
        qp.ApplicationEntry.of("PagerBell notification dispatch", "PagerBell"),
        qp.ApplicationEntry.of("Bell Labs phones", "Bell Labs"),
    ]
    mention = qp.find_application_mention(question, catalog)
    assert mention is not None and mention.match.applications == (catalog[0].application,)


def test_a_product_is_its_owners_not_another_companys_dependency_on_it() -> None:
    """ "vault" is Keyco's Vault: Shipit only lists it as a dependency, while Keyco's own
    entry that lists it in parentheses counts (the outage hit it)."""
    catalog = [
        qp.ApplicationEntry.of("Keyco Vault Storage", "Keyco"),
        qp.ApplicationEntry.of("Keyco WAN (Vault, Mail)", "Keyco"),
        qp.ApplicationEntry.of("Shipit organization (Vault token sync)", "Shipit"),
    ]
    match = qp.match_applications("vault", catalog)
    assert match is not None and set(match.applications) == {e.application for e in catalog[:2]}
    # A component no one names as a product of theirs ("redis") stays everyone's.
    redis = [qp.ApplicationEntry.of("Keyco Mail (Redis)", "Keyco"),
             qp.ApplicationEntry.of("Shipit builds (Redis)", "Shipit")]  # fmt: skip
    found = qp.match_applications("redis", redis)
    assert found is not None and len(found.applications) == 2


def test_an_acronym_spelt_out_elsewhere_says_what_kind_of_product_it_is() -> None:
    """Cirrus spells NLB out as a "Network Load Balancer": Nimbus's NLB is one of
    Nimbus's load balancers, though no Nimbus name says so, and no network."""
    catalog = [
        qp.ApplicationEntry.of("Nimbus Elastic Load Balancing", "Nimbus"),
        qp.ApplicationEntry.of("Nimbus Queue (and VM, NLB)", "Nimbus"),
        qp.ApplicationEntry.of("Cirrus networking (VPN, Network Load Balancer)", "Cirrus"),
        qp.ApplicationEntry.of("Nimbus Network (backbone)", "Nimbus"),
    ]
    balancers = qp.match_applications("nimbus load balancers", catalog)
    assert balancers is not None
    assert set(balancers.applications) == {e.application for e in catalog[:2]}
    network = qp.match_applications("nimbus network", catalog)
    assert network is not None and network.applications == (catalog[3].application,)


def test_a_company_in_parentheses_qualifies_the_name_and_is_no_alternative() -> None:
    mention = qp.find_application_mention("queue issues (cumulus side)", LOAD_BALANCERS)
    assert mention is not None
    assert mention.match.applications == (LOAD_BALANCERS[2].application,)


def test_a_list_of_products_in_a_name_is_not_two_names_of_one() -> None:
    """ "VM / DISK / ALB eu-west-2" lists products; "Cumulus VM" elsewhere is not the
    same product as the disk."""
    match = qp.match_applications("disk", LOAD_BALANCERS)
    assert match is not None and match.applications == (LOAD_BALANCERS[1].application,)


def test_an_everyday_word_names_an_application_only_as_its_first_word_or_company() -> None:
    catalog = [
        qp.ApplicationEntry.of("Metro NEW power grid", "Metro Energy"),
        qp.ApplicationEntry.of("Acme DNS (and customers such as Shops)", "Acme"),
        qp.ApplicationEntry.of("Slack real-time message servers", "Slack"),
    ]
    assert qp.find_application_mention("any new incidents since Friday?", catalog) is None
    assert qp.find_application_mention("outages affecting customers", catalog) is None
    slack = qp.find_application_mention("slack outages", catalog)
    assert slack is not None and slack.match.applications == (catalog[2].application,)


# Products written as people write them, not as the catalog spells them.
SPELLINGS = [
    qp.ApplicationEntry.of("Acme Object Storage Balancing eu-north-1", "Acme Cloud"),
    qp.ApplicationEntry.of("Acme VM / BST / RDB eu-north-1", "Acme Cloud"),
    qp.ApplicationEntry.of("Harbor Overflow / Harbor Exchange network", "Harbor Exchange"),
    qp.ApplicationEntry.of("Storage Cloud (Storage Service, dashboards)", "Storage"),
    qp.ApplicationEntry.of("Trainly CI builds on Acme Object Storage", "Trainly CI"),
]


@pytest.mark.parametrize(
    ("question", "application"),
    [
        # Another inflection of the name's words ("balancers" of "Balancing").
        ("acme object storage balancers, every incident", SPELLINGS[0].application),
        # Two words of a name written as one.
        ("harboroverflow outages", SPELLINGS[2].application),
        # A catalog acronym spelt out.
        ("block storage tier issues at acme", SPELLINGS[1].application),
    ],
)
def test_a_product_is_found_however_its_name_is_written(question: str, application: str) -> None:
    mention = qp.find_application_mention(question, SPELLINGS)
    assert mention is not None and application in mention.match.applications


def test_another_companys_name_counts_only_inside_a_product_of_a_company_also_named() -> None:
    # "Storage" is a company; in Acme's own product name beside "acme" it is a word of it...
    acme = qp.match_applications("acme storage balancing", SPELLINGS)
    assert acme is not None and acme.applications == (SPELLINGS[0].application,)
    # ...alone it is that company, and Trainly's builds on Acme's storage are not Acme's.
    alone = qp.match_applications("storage", SPELLINGS)
    assert alone is not None and alone.applications == (SPELLINGS[3].application,)
    storage = qp.match_applications("acme object storage", SPELLINGS)
    assert storage is not None and SPELLINGS[4].application not in storage.applications


def test_a_mention_keeps_the_words_that_named_it_as_typed() -> None:
    mention = qp.find_application_mention("block storage tier problems (acme side)", SPELLINGS)
    assert mention is not None and mention.said == ("block storage tier", "acme")


def test_a_products_acronym_in_another_entry_names_the_same_product() -> None:
    """ "Elastic Load Balancing" is the ELB that a list of products writes as such;
    another company's ELB is not meant."""
    catalog = [
        qp.ApplicationEntry.of("Cumulus Elastic Load Balancing eu-west-2", "Cumulus Cloud"),
        qp.ApplicationEntry.of("Cumulus VM / DISK / ELB eu-west-2", "Cumulus Cloud"),
        qp.ApplicationEntry.of("Cumulus VM ap-south-1", "Cumulus Cloud"),
        qp.ApplicationEntry.of("Nimbus ELB gateway", "Nimbus"),
    ]
    mention = qp.find_application_mention("cumulus load balancer outages", catalog)
    assert mention is not None
    assert mention.match.applications == (catalog[0].application, catalog[1].application)


def test_a_generic_word_counts_where_it_is_part_of_a_products_own_name() -> None:
    """ "app" says nothing of "app engine" alone, but "Flow Engine" and "App Engine"
    are two products: the catalog writes "App Engine", so "app" is its name."""
    catalog = [
        qp.ApplicationEntry.of("Nimbus hosting (Queue, App Engine)", "Nimbus"),
        qp.ApplicationEntry.of("Nimbus Flow Engine networking", "Nimbus"),
        qp.ApplicationEntry.of("Chatter real-time servers", "Chatter"),
        qp.ApplicationEntry.of("Chatter app (web)", "Chatter"),
    ]
    match = qp.match_applications("app engine", catalog)
    assert match is not None and match.applications == (catalog[0].application,)
    # Beside a vendor's name it stays generic: "chatter app" is any of Chatter's.
    chatter = qp.match_applications("chatter app", catalog)
    assert chatter is not None and set(chatter.applications) == {e.application for e in catalog[2:]}


def test_a_vendors_divisions_are_one_owner_of_its_products() -> None:
    """ "Nimbus Cloud" sells Queue; "Nimbus" (the parent) listing it in parentheses is
    the same vendor's entry, not another company's dependency. Shipit's is."""
    catalog = [
        qp.ApplicationEntry.of("Nimbus Cloud Queue", "Nimbus Cloud"),
        qp.ApplicationEntry.of("Nimbus Mail (Queue)", "Nimbus"),
        qp.ApplicationEntry.of("Shipit builds (Queue)", "Shipit"),
    ]
    match = qp.match_applications("queue", catalog)
    assert match is not None and set(match.applications) == {e.application for e in catalog[:2]}


def test_a_vendors_first_name_means_all_its_own_entries() -> None:
    """ "nimbus" is Nimbus Web Services: its "NWS Queue" as much as "Nimbus Store";
    Shipit's entry naming Nimbus as what it runs on is Shipit's."""
    catalog = [
        qp.ApplicationEntry.of("Nimbus Store", "Nimbus Web Services"),
        qp.ApplicationEntry.of("NWS Queue eu-west-1", "Nimbus Web Services"),
        qp.ApplicationEntry.of("Shipit builds (Nimbus Store)", "Shipit"),
    ]
    match = qp.match_applications("nimbus", catalog)
    assert match is not None and set(match.applications) == {e.application for e in catalog[:2]}


def test_another_company_running_on_a_product_is_not_that_product() -> None:
    """ "flow engine" is Nimbus's: Shipit's builds "on Nimbus Flow Engine" run on it."""
    catalog = [
        qp.ApplicationEntry.of("Nimbus Flow Engine networking", "Nimbus Cloud"),
        qp.ApplicationEntry.of("Shipit Linux builds on Nimbus Flow Engine", "Shipit"),
    ]
    match = qp.match_applications("flow engine", catalog)
    assert match is not None and match.applications == (catalog[0].application,)


def test_a_vendors_name_means_its_own_entries_not_those_running_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "nws" is Nimbus Web Services: Shipit's entry that runs on it names it only
    in parentheses, as where it runs."""
    catalog = [
        qp.ApplicationEntry.of("NWS Queue eu-west-1", "Nimbus Web Services"),
        qp.ApplicationEntry.of("Shipit Cloud (NWS eu-west-1)", "Shipit"),
    ]
    monkeypatch.setitem(qp.APPLICATION_ALIASES, "nws", "nimbus web services")
    match = qp.match_applications("nws", catalog)
    assert match is not None and match.applications == (catalog[0].application,)


@pytest.mark.parametrize("question", ["report io incidents", "any outages of report io?"])
def test_a_dotted_name_typed_with_a_space_is_that_name(question: str) -> None:
    """ "report" is a question's word, but "report io" spells "report.io"."""
    catalog = [
        qp.ApplicationEntry.of("report.io alerting (Postgres)", "report.io"),
        qp.ApplicationEntry.of("tokens.io registry", "Tokens Foundation (tokens.io team)"),
    ]
    mention = qp.find_application_mention(question, catalog)
    assert mention is not None and mention.match.applications == (catalog[0].application,)


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("e-mail relay incidents", "Postbox email relay"),
        ("email gateway outages", "Courier e-mail gateway"),
        ("any problems with the postbox e-mail relay?", "Postbox email relay"),
        ("e-mail dashboard incidents", "Mailer email dashboard"),
    ],
)
def test_a_word_is_the_same_with_or_without_its_hyphen(question: str, wanted: str) -> None:
    catalog = [
        qp.ApplicationEntry.of("Postbox email relay", "Postbox"),
        qp.ApplicationEntry.of("Courier e-mail gateway", "Courier"),
        qp.ApplicationEntry.of("Postbox relay dashboard", "Postbox"),
    ]
    if "dashboard" in question:  # only the unhyphenated spelling in the catalog
        catalog = [qp.ApplicationEntry.of("Mailer email dashboard", "Mailer"), catalog[2]]
    mention = qp.find_application_mention(question, catalog)
    assert mention is not None and mention.match.applications == (wanted,)


def test_a_products_code_in_its_vendors_other_entry_names_it() -> None:
    """ "block storage" is Nimbus's B7: its entry listing B7 in parentheses was hit
    too; another company's B7 is not Nimbus's."""
    catalog = [
        qp.ApplicationEntry.of("Nimbus B7 block storage (Images)", "Nimbus"),
        qp.ApplicationEntry.of("Nimbus API tokens (Workers, B7, Images)", "Nimbus"),
        qp.ApplicationEntry.of("Shipit builds (B7 cache)", "Shipit"),
    ]
    match = qp.match_applications("nimbus block storage", catalog)
    assert match is not None and set(match.applications) == {e.application for e in catalog[:2]}
