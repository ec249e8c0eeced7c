"""The ask words of chat, respelt before the router reads them."""

import pytest

from copilot.chat_models.offline.spelling import respell_asks


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("some calls still fail. wat now", "some calls still fail. what now"),
        ("dropped w/ ack timeouts, whcih setting do i change",
         "dropped with ack timeouts, which setting do i change"),
        ("broke thru the night bc of a cron", "broke through the night because of a cron"),
        ("is there a runbok? anyoen seen it befor", "is there a runbook? anyone seen it before"),
    ],
)  # fmt: skip
def test_shorthand_and_misspelt_ask_words_are_written_out(typed: str, meant: str) -> None:
    assert respell_asks(typed) == meant


@pytest.mark.parametrize(
    "typed",
    [
        "whats the play, hows it going",  # "what's" without its apostrophe is no typo
        "the U.S. region and R2 in eu-west-1",  # abbreviations, names, regions
        "R and Go services on us/east, a/b test",  # capitalised letters name things
        "ProxySQL LimitNOFILE stuck at 65536",  # words near no ask word stay
        "hwo is it",  # as near "how" as "who": left as typed
        "any arch docs tagged ttl?",  # a letter changed is no slip: "docs" is not "does"
    ],
)
def test_everything_else_is_left_as_written(typed: str) -> None:
    assert respell_asks(typed) == typed
