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
        ("database incidents in the trailing 30 days", dt.date(2025, 12, 11), TODAY),
        ("outages over a rolling 30d", dt.date(2025, 12, 11), TODAY),
        ("the newest incidents", dt.date(2025, 12, 11), TODAY),
        # A count of days up to now, said the other way round.
        ("what happened in the 20 days up to today?", dt.date(2025, 12, 21), TODAY),
        ("outages in the two weeks leading up to now", dt.date(2025, 12, 27), TODAY),
        ("incidents 30 days to date", dt.date(2025, 12, 11), TODAY),
        # A month and its year stand for that month without "in".
        ("checkout meltdown, may 2025", dt.date(2025, 5, 1), dt.date(2025, 5, 31)),
        ("sept 2024 dns mess", dt.date(2024, 9, 1), dt.date(2024, 9, 30)),
        ("in the last half year", dt.date(2025, 7, 12), TODAY),
        ("since the 1st", dt.date(2026, 1, 1), TODAY),
        ("since the start of October", dt.date(2025, 10, 1), TODAY),
        ("since the beginning of Q4", dt.date(2025, 10, 1), TODAY),
        ("did anything happen since new year's?", dt.date(2026, 1, 1), TODAY),
        ("security incidents this yr", dt.date(2026, 1, 1), TODAY),
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

Expected = tuple[str, ...] | set[str] | None


def found_as(applications: tuple[str, ...] | None, expected: Expected) -> Expected:
    """What was found, compared as `expected` is written: a tuple in order, a set in
    any order, None for no match."""
    if applications is None:
        return None
    return set(applications) if isinstance(expected, set) else applications


def names(catalog: list[qp.ApplicationEntry], *rows: int) -> set[str]:
    return {catalog[row].application for row in rows}


# "Ask Forum / Forum Network" is one product by two names; "Shop EU / Shop US" is not.
FORUMS = [
    qp.ApplicationEntry.of("Ask Forum / Forum Network", "Forum Co"),
    qp.ApplicationEntry.of("Forum Network (search cluster)", "Forum Co"),
    qp.ApplicationEntry.of("Forum Network (search cluster)", "Other Co"),
    qp.ApplicationEntry.of("Shop EU / Shop US", "Shop Co"),
]

LOAD_BALANCERS = [
    qp.ApplicationEntry.of("Cumulus Edge Load Balancing eu-west-2", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus VM / DISK / ALB eu-west-2", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus Queue eu-west-2 (and VM, NLB, Console)", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus VM ap-south-1", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Nimbus ALB gateway", "Nimbus"),
]

FORGE = [
    qp.ApplicationEntry.of("Forge Builds runners, Forge Spaces (and Pilot agent, Pages)", "Forge"),
    qp.ApplicationEntry.of("Forge Spaces (East)", "Forge"),
    qp.ApplicationEntry.of("Forge Pilot (completions)", "Forge"),
    qp.ApplicationEntry.of("Forge Pages", "Forge"),
    qp.ApplicationEntry.of("Forge Builds (Redis)", "Forge"),
    qp.ApplicationEntry.of("Paper Pages", "Paper Co"),
]

VENDORS = [
    qp.ApplicationEntry.of("Dynoku web dynos", "Dynoku"),
    qp.ApplicationEntry.of("Dynoku API (deploys)", "Dynoku"),
    qp.ApplicationEntry.of("Trellis CI OS X builds", "Trellis CI"),
    qp.ApplicationEntry.of("Forge Packages (Container, npm registries)", "Forge"),
    qp.ApplicationEntry.of("npm registry", "npm"),
]

SUITES = [
    qp.ApplicationEntry.of("Gmail, Google Calendar", "Google"),
    qp.ApplicationEntry.of("Google blob storage (Photos, Drive)", "Google"),
    qp.ApplicationEntry.of("Google Meet Livestream", "Google"),
    qp.ApplicationEntry.of("Google Cloud Service Control (Workspace APIs)", "Google Cloud"),
    qp.ApplicationEntry.of("Google Search", "Google"),
    qp.ApplicationEntry.of("Atlassian Cloud (Jira, Docs)", "Atlassian"),
    qp.ApplicationEntry.of("Slack workspace directory", "Slack"),
]

# "vault" is Keyco's Vault: Shipit only lists it as a dependency, while Keyco's own
# entry that lists it in parentheses counts (the outage hit it).
VAULTS = [
    qp.ApplicationEntry.of("Keyco Vault Storage", "Keyco"),
    qp.ApplicationEntry.of("Keyco WAN (Vault, Mail)", "Keyco"),
    qp.ApplicationEntry.of("Shipit organization (Vault token sync)", "Shipit"),
]
# A component no one names as a product of theirs ("redis") stays everyone's.
REDIS = [
    qp.ApplicationEntry.of("Keyco Mail (Redis)", "Keyco"),
    qp.ApplicationEntry.of("Shipit builds (Redis)", "Shipit"),
]

# Cirrus spells NLB out as a "Network Load Balancer": Nimbus's NLB is one of Nimbus's
# load balancers, though no Nimbus name says so, and no network.
SPELT_OUT_NLB = [
    qp.ApplicationEntry.of("Nimbus Elastic Load Balancing", "Nimbus"),
    qp.ApplicationEntry.of("Nimbus Queue (and VM, NLB)", "Nimbus"),
    qp.ApplicationEntry.of("Cirrus networking (VPN, Network Load Balancer)", "Cirrus"),
    qp.ApplicationEntry.of("Nimbus Network (backbone)", "Nimbus"),
]

# Products written as people write them, not as the catalog spells them.
SPELLINGS = [
    qp.ApplicationEntry.of("Acme Object Storage Balancing eu-north-1", "Acme Cloud"),
    qp.ApplicationEntry.of("Acme VM / BST / RDB eu-north-1", "Acme Cloud"),
    qp.ApplicationEntry.of("Harbor Overflow / Harbor Exchange network", "Harbor Exchange"),
    qp.ApplicationEntry.of("Storage Cloud (Storage Service, dashboards)", "Storage"),
    qp.ApplicationEntry.of("Trainly CI builds on Acme Object Storage", "Trainly CI"),
]

# "app" says nothing of "app engine" alone, but "Flow Engine" and "App Engine" are two
# products: the catalog writes "App Engine", so "app" is its name.
ENGINES = [
    qp.ApplicationEntry.of("Nimbus hosting (Queue, App Engine)", "Nimbus"),
    qp.ApplicationEntry.of("Nimbus Flow Engine networking", "Nimbus"),
    qp.ApplicationEntry.of("Chatter real-time servers", "Chatter"),
    qp.ApplicationEntry.of("Chatter app (web)", "Chatter"),
]

# "Nimbus Cloud" sells Queue; "Nimbus" (the parent) listing it in parentheses is the
# same vendor's entry, not another company's dependency. Shipit's is.
DIVISIONS = [
    qp.ApplicationEntry.of("Nimbus Cloud Queue", "Nimbus Cloud"),
    qp.ApplicationEntry.of("Nimbus Mail (Queue)", "Nimbus"),
    qp.ApplicationEntry.of("Shipit builds (Queue)", "Shipit"),
]

# "nimbus" is Nimbus Web Services: its "NWS Queue" as much as "Nimbus Store";
# Shipit's entry naming Nimbus as what it runs on is Shipit's.
FIRST_NAME = [
    qp.ApplicationEntry.of("Nimbus Store", "Nimbus Web Services"),
    qp.ApplicationEntry.of("NWS Queue eu-west-1", "Nimbus Web Services"),
    qp.ApplicationEntry.of("Shipit builds (Nimbus Store)", "Shipit"),
]

# "flow engine" is Nimbus's: Shipit's builds "on Nimbus Flow Engine" run on it.
RUNS_ON = [
    qp.ApplicationEntry.of("Nimbus Flow Engine networking", "Nimbus Cloud"),
    qp.ApplicationEntry.of("Shipit Linux builds on Nimbus Flow Engine", "Shipit"),
]

# "block storage" is Nimbus's B7: its entry listing B7 in parentheses was hit too;
# another company's B7 is not Nimbus's.
CODES = [
    qp.ApplicationEntry.of("Nimbus B7 block storage (Images)", "Nimbus"),
    qp.ApplicationEntry.of("Nimbus API tokens (Workers, B7, Images)", "Nimbus"),
    qp.ApplicationEntry.of("Shipit builds (B7 cache)", "Shipit"),
]


class TestMatchApplications:
    """`match_applications(subject, catalog)`: a tuple is the applications in order,
    a set in any order, None no match."""

    @pytest.mark.parametrize(
        ("catalog", "subject", "expected"),
        [
            pytest.param(CATALOG, "payu core", ("PayU Core",), id="exact-name-any-case"),
            # By words across application and company.
            pytest.param(CATALOG, "codespaces", names(CATALOG, 0, 1), id="a-word-of-two-names"),
            pytest.param(
                CATALOG, "GitHub actions", (CATALOG[1].application,), id="company-and-product-words"
            ),
            pytest.param(
                CATALOG, "Amazon S3", names(CATALOG, 2, 3), id="vendor-names-either-spelling"
            ),
            pytest.param(CATALOG, "slack", (CATALOG[5].application,), id="a-company-only-its-own"),
            pytest.param(CATALOG, "GCE", (CATALOG[6].application,), id="abbreviation-expanded"),
            pytest.param(CATALOG, "mainframe", None, id="unknown-name-no-match"),
            pytest.param(
                FORUMS,
                "ask forum",
                (FORUMS[0].application, FORUMS[1].application),
                id="slash-alias-finds-the-other-names-entries",
            ),
            pytest.param(
                SUITES,
                "slack workspace",
                (SUITES[6].application,),
                id="suite-name-with-more-words-is-no-suite",
            ),
            pytest.param(
                VAULTS, "vault", names(VAULTS, 0, 1), id="owners-product-not-anothers-dependency"
            ),
            pytest.param(
                REDIS, "redis", names(REDIS, 0, 1), id="a-component-of-everyones-stays-everyones"
            ),
            pytest.param(
                SPELT_OUT_NLB,
                "nimbus load balancers",
                names(SPELT_OUT_NLB, 0, 1),
                id="acronym-spelt-out-elsewhere-gives-the-kind",
            ),
            pytest.param(
                SPELT_OUT_NLB,
                "nimbus network",
                (SPELT_OUT_NLB[3].application,),
                id="acronyms-kind-is-where-it-ends",
            ),
            # "VM / DISK / ALB eu-west-2" lists products; "Cumulus VM" elsewhere is not
            # the same product as the disk.
            pytest.param(
                LOAD_BALANCERS,
                "disk",
                (LOAD_BALANCERS[1].application,),
                id="a-list-of-products-is-not-two-names-of-one",
            ),
            # "Storage" is a company; in Acme's own product name beside "acme" it is a
            # word of it; alone it is that company.
            pytest.param(
                SPELLINGS,
                "acme storage balancing",
                (SPELLINGS[0].application,),
                id="another-companys-name-inside-a-product-named-with-its-company",
            ),
            pytest.param(
                SPELLINGS,
                "storage",
                (SPELLINGS[3].application,),
                id="another-companys-name-alone-is-that-company",
            ),
            pytest.param(
                ENGINES,
                "app engine",
                (ENGINES[0].application,),
                id="generic-word-part-of-a-products-own-name",
            ),
            # Beside a vendor's name it stays generic: "chatter app" is any of Chatter's.
            pytest.param(
                ENGINES,
                "chatter app",
                names(ENGINES, 2, 3),
                id="generic-word-beside-a-vendor-stays-generic",
            ),
            pytest.param(
                DIVISIONS, "queue", names(DIVISIONS, 0, 1), id="a-vendors-divisions-are-one-owner"
            ),
            pytest.param(
                FIRST_NAME,
                "nimbus",
                names(FIRST_NAME, 0, 1),
                id="a-vendors-first-name-means-all-its-entries",
            ),
            pytest.param(
                RUNS_ON,
                "flow engine",
                (RUNS_ON[0].application,),
                id="running-on-a-product-is-not-that-product",
            ),
            pytest.param(
                CODES,
                "nimbus block storage",
                names(CODES, 0, 1),
                id="a-products-code-in-its-vendors-other-entry",
            ),
        ],
    )
    def test_finds(
        self, catalog: list[qp.ApplicationEntry], subject: str, expected: Expected
    ) -> None:
        match = qp.match_applications(subject, catalog)
        assert found_as(match and match.applications, expected) == expected


class TestHowAMatchIsMade:
    """A name as the catalog writes it is an exact match, words of names a partial one."""

    @pytest.mark.parametrize(
        ("subject", "how"),
        [
            pytest.param("payu core", "exact", id="whole-name-exact-first"),
            pytest.param("codespaces", "partial", id="by-words-partial"),
        ],
    )
    def test_says(self, subject: str, how: str) -> None:
        match = qp.match_applications(subject, CATALOG)
        assert match is not None and match.how == how


def test_trainlys_builds_on_acmes_storage_are_not_acmes() -> None:
    storage = qp.match_applications("acme object storage", SPELLINGS)
    assert storage is not None and SPELLINGS[4].application not in storage.applications


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


PRODUCT_ACRONYMS = [
    qp.ApplicationEntry.of("Google Cloud Load Balancing (GFE) - Cloud Console", "Google Cloud"),
    qp.ApplicationEntry.of("Google Compute Engine networking (Network Load Balancer)"),
]
AIR = [qp.ApplicationEntry.of("Azure Identity Router (sign-in)", "Microsoft")]
PAYU = [qp.ApplicationEntry.of("PayU Gateway, PayU Reports (batch)", "PayU Demo")]
PAGER_BELL = [
    qp.ApplicationEntry.of("PagerBell notification dispatch", "PagerBell"),
    qp.ApplicationEntry.of("Bell Labs phones", "Bell Labs"),
]
EVERYDAY = [
    qp.ApplicationEntry.of("Metro NEW power grid", "Metro Energy"),
    qp.ApplicationEntry.of("Acme DNS (and customers such as Shops)", "Acme"),
    qp.ApplicationEntry.of("Slack real-time message servers", "Slack"),
]
# "Elastic Load Balancing" is the ELB that a list of products writes as such;
# another company's ELB is not meant.
ELB = [
    qp.ApplicationEntry.of("Cumulus Elastic Load Balancing eu-west-2", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus VM / DISK / ELB eu-west-2", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Cumulus VM ap-south-1", "Cumulus Cloud"),
    qp.ApplicationEntry.of("Nimbus ELB gateway", "Nimbus"),
]
# "report" is a question's word, but "report io" spells "report.io".
DOTTED = [
    qp.ApplicationEntry.of("report.io alerting (Postgres)", "report.io"),
    qp.ApplicationEntry.of("tokens.io registry", "Tokens Foundation (tokens.io team)"),
]
MAIL = [
    qp.ApplicationEntry.of("Postbox email relay", "Postbox"),
    qp.ApplicationEntry.of("Courier e-mail gateway", "Courier"),
    qp.ApplicationEntry.of("Postbox relay dashboard", "Postbox"),
]
# Only the unhyphenated spelling in the catalog.
MAILER = [qp.ApplicationEntry.of("Mailer email dashboard", "Mailer"), MAIL[2]]


class TestFindApplicationMention:
    """`find_application_mention(question, catalog)`: what the mention matches, a
    tuple in order, a set in any order, None for no mention."""

    @pytest.mark.parametrize(
        ("catalog", "question", "expected"),
        [
            # The acronym of the product inside a longer catalog name.
            pytest.param(
                PRODUCT_ACRONYMS,
                "any NLB outages?",
                (PRODUCT_ACRONYMS[1].application,),
                id="acronym-inside-a-longer-name",
            ),
            pytest.param(
                AIR,
                "the air conditioning in the hall failed",
                None,
                id="acronym-that-is-an-ordinary-word",
            ),
            pytest.param(
                PAYU,
                "PUG outages, full list please",
                (PAYU[0].application,),
                id="capitals-inside-a-word-in-an-acronym",
            ),
            pytest.param(
                CATALOG,
                "what's on file for incident dot io",
                (CATALOG[4].application,),
                id="a-domain-said-aloud",
            ),
            # A camel-case name by its capitals...
            pytest.param(
                [
                    qp.ApplicationEntry.of("BigQuery (US multi-region)", "Google Cloud"),
                    qp.ApplicationEntry.of("Amazon DynamoDB us-east-1", "Amazon Web Services"),
                ],
                "bq outages, all of them",
                ("BigQuery (US multi-region)",),
                id="camel-case-capitals",
            ),
            pytest.param(
                [
                    qp.ApplicationEntry.of("BigQuery (US multi-region)", "Google Cloud"),
                    qp.ApplicationEntry.of("Amazon DynamoDB us-east-1", "Amazon Web Services"),
                ],
                "ddb incidents",
                ("Amazon DynamoDB us-east-1",),
                id="camel-case-capitals-of-a-product",
            ),
            # A host name by its labels: the catalog has "Slack", not "app.slack.com"...
            pytest.param(
                CATALOG,
                "which incidents hit app.slack.com?",
                (CATALOG[5].application,),
                id="a-host-name",
            ),
            pytest.param(
                CATALOG,
                "outages of payu dot com",
                (CATALOG[7].application,),
                id="a-host-name-said-aloud",
            ),
            # A one-word name written as two words.
            pytest.param(
                PAGER_BELL,
                "pager bell incidents",
                (PAGER_BELL[0].application,),
                id="one-word-name-as-two-words",
            ),
            pytest.param(
                PAGER_BELL,
                "anything on pager bell?",
                (PAGER_BELL[0].application,),
                id="one-word-name-as-two-words-after-a-filler",
            ),
            pytest.param(
                LOAD_BALANCERS,
                "queue issues (cumulus side)",
                (LOAD_BALANCERS[2].application,),
                id="company-in-parentheses-qualifies-the-name",
            ),
            # An everyday word names an application only as its first word or company.
            pytest.param(
                EVERYDAY, "any new incidents since Friday?", None, id="everyday-word-inside-a-name"
            ),
            pytest.param(
                EVERYDAY, "outages affecting customers", None, id="everyday-word-in-parentheses"
            ),
            pytest.param(
                EVERYDAY,
                "slack outages",
                (EVERYDAY[2].application,),
                id="everyday-word-that-is-a-company",
            ),
            pytest.param(
                ELB,
                "cumulus load balancer outages",
                (ELB[0].application, ELB[1].application),
                id="a-products-acronym-in-another-entry",
            ),
            pytest.param(
                DOTTED,
                "report io incidents",
                (DOTTED[0].application,),
                id="dotted-name-typed-with-a-space",
            ),
            pytest.param(
                DOTTED,
                "any outages of report io?",
                (DOTTED[0].application,),
                id="dotted-name-typed-with-a-space-at-the-end",
            ),
            # A word is the same with or without its hyphen.
            pytest.param(
                MAIL,
                "e-mail relay incidents",
                ("Postbox email relay",),
                id="hyphenated-asked-unhyphenated-named",
            ),
            pytest.param(
                MAIL,
                "email gateway outages",
                ("Courier e-mail gateway",),
                id="unhyphenated-asked-hyphenated-named",
            ),
            pytest.param(
                MAIL,
                "any problems with the postbox e-mail relay?",
                ("Postbox email relay",),
                id="hyphenated-beside-the-company",
            ),
            pytest.param(
                MAILER,
                "e-mail dashboard incidents",
                ("Mailer email dashboard",),
                id="hyphenated-asked-only-unhyphenated-in-catalog",
            ),
        ],
    )
    def test_finds(
        self, catalog: list[qp.ApplicationEntry], question: str, expected: Expected
    ) -> None:
        mention = qp.find_application_mention(question, catalog)
        assert found_as(mention and mention.match.applications, expected) == expected


class TestAProductWrittenOtherwise:
    """A product is found however its name is written (the mention names it among others)."""

    @pytest.mark.parametrize(
        ("question", "application"),
        [
            # Another inflection of the name's words ("balancers" of "Balancing").
            pytest.param(
                "acme object storage balancers, every incident",
                SPELLINGS[0].application,
                id="inflected",
            ),
            # Two words of a name written as one.
            pytest.param("harboroverflow outages", SPELLINGS[2].application, id="two-words-joined"),
            # ...or hyphenated.
            pytest.param(
                "trainly-ci incidents", SPELLINGS[4].application, id="two-words-hyphenated"
            ),
            # A catalog acronym spelt out.
            pytest.param(
                "block storage tier issues at acme",
                SPELLINGS[1].application,
                id="acronym-spelt-out",
            ),
        ],
    )
    def test_is_found(self, question: str, application: str) -> None:
        mention = qp.find_application_mention(question, SPELLINGS)
        assert mention is not None and application in mention.match.applications


def test_an_acronym_of_the_product_inside_a_longer_name_finds_it_first() -> None:
    gclb = qp.find_application_mention("GCLB incidents", PRODUCT_ACRONYMS)
    assert gclb is not None and gclb.match.applications[0].startswith("Google Cloud Load")


def test_a_mention_keeps_the_words_that_named_it_as_typed() -> None:
    mention = qp.find_application_mention("block storage tier problems (acme side)", SPELLINGS)
    assert mention is not None and mention.said == ("block storage tier", "acme")


class TestNamesListedTogether:
    """Names given as alternatives or listed together each count: a mention finds
    what each names, not only what all their words name together (one entry, if any),
    and the tool, called with the mention's subject, finds the same (in the same order
    where `in_order`)."""

    @pytest.mark.parametrize(
        ("catalog", "question", "wanted", "in_order"),
        [
            # Other names of the same company's product.
            pytest.param(
                LOAD_BALANCERS,
                "cumulus load balancers (alb/nlb) - every incident",
                {0, 1, 2},
                True,
                id="alternatives-in-parentheses",
            ),
            pytest.param(
                LOAD_BALANCERS,
                "cumulus load balancers / ALB / NLB outages",
                {0, 1, 2},
                True,
                id="alternatives-by-slashes",
            ),
            pytest.param(
                LOAD_BALANCERS,
                "cumulus load balancers or alb or nlb, full list",
                {0, 1, 2},
                True,
                id="alternatives-by-or",
            ),
            # "X and Y" asks for both products, not for the one entry that names both;
            # an everyday word ("pages") names a product beside another of its
            # company's, and not another company's.
            pytest.param(
                FORGE, "spaces and pilot incidents", {0, 1, 2}, False, id="products-by-and"
            ),
            pytest.param(
                FORGE, "incidents for forge spaces, pilot", {0, 1, 2}, False, id="products-by-comma"
            ),
            pytest.param(
                FORGE,
                "forge builds & pages outages",
                {0, 3, 4},
                False,
                id="everyday-word-beside-its-companys-product",
            ),
            # A list naming several companies finds each one's products.
            pytest.param(
                VENDORS, "dynoku and trellis ci incidents", {0, 1, 2}, False, id="companies-by-and"
            ),
            pytest.param(
                VENDORS,
                "incidents for trellis ci / dynoku",
                {0, 1, 2},
                False,
                id="companies-by-slash",
            ),
            # npm is also a company, but beside Forge's packages it is Forge's registry.
            pytest.param(
                VENDORS,
                "forge packages (npm, container) incidents",
                {3},
                False,
                id="a-company-word-beside-anothers-product",
            ),
            # No name says Gmail is part of Google Workspace; the suite's name still
            # means its products (its vendor's only: Atlassian's docs are not Google's).
            pytest.param(SUITES, "google's workspace apps", {0, 1, 2, 3}, False, id="suite-apps"),
            pytest.param(SUITES, "google workspace outages", {0, 1, 2, 3}, False, id="suite-name"),
        ],
    )
    def test_each_counts(
        self,
        catalog: list[qp.ApplicationEntry],
        question: str,
        wanted: set[int],
        in_order: bool,
    ) -> None:
        mention = qp.find_application_mention(question, catalog)
        assert mention is not None
        assert set(mention.match.applications) == names(catalog, *wanted)
        again = qp.match_applications(mention.subject, catalog)
        assert again is not None
        if in_order:
            assert again.applications == mention.match.applications
        else:
            assert set(again.applications) == set(mention.match.applications)


@pytest.mark.parametrize(
    ("text", "start"),
    [
        # A window in the story tells when something of ours happened...
        ("The instance was created years ago, before 2014. Has this happened anywhere?", None),
        ("We failed over twice this week. Any history on this?", None),
        # ...a window in what is asked filters the incidents...
        ("Our pool ran dry after a deploy. Anything like it in the last 30 days?",
         dt.date(2025, 12, 11)),
        # ...and a message that only asks, or only tells, is read whole.
        ("what broke in the last 30 days?", dt.date(2025, 12, 11)),
        ("checkout timeouts in the last 30 days", dt.date(2025, 12, 11)),
    ],
)  # fmt: skip
def test_only_the_asking_sentences_give_a_search_its_window(text: str, start) -> None:
    window, _ = qp.asked_time_window(text, TODAY)
    assert (window.start if window else None) == start


def test_words_that_point_elsewhere_name_no_application_whatever_a_name_says() -> None:
    catalog = [
        qp.ApplicationEntry.of("Git backend and other services (one site)", "GitHub"),
        qp.ApplicationEntry.of("Payments API", "Acme"),
    ]
    for question in ["Which other services were hit?", "were other systems affected?"]:
        assert qp.find_application_mention(question, catalog) is None, question
    found = qp.find_application_mention("incidents of the git backend", catalog)
    assert found is not None and found.match.applications == (
        "Git backend and other services (one site)",
    )


def test_an_everyday_word_written_as_a_name_names_the_product_that_has_it() -> None:
    catalog = [
        qp.ApplicationEntry.of("AWS Lambda us-east-1", "Amazon Web Services"),
        qp.ApplicationEntry.of("Payments API", "Acme"),
    ]
    found = qp.find_application_mention("Anything affecting Lambda?", catalog)
    assert found is not None and found.match.applications == ("AWS Lambda us-east-1",)
    # In lower case an everyday word is a word ("lambda functions" in any code).
    assert qp.find_application_mention("anything affecting lambda functions?", catalog) is None


def test_a_number_word_is_a_whole_word() -> None:
    # "last and" once read as "last an d(ay)": a one-day window.
    assert (
        qp.parse_time_window("how long did it last and who fixed it", dt.date(2026, 4, 30))[0]
        is None
    )
    window = qp.parse_time_window("outages in the past one week", dt.date(2026, 4, 30))[0]
    assert window is not None and window.start == dt.date(2026, 4, 23)
